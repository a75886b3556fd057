"""coldrun's supervisor: runs one process execution per boot and records it crash-safely."""

__version__ = "0.1.0"
