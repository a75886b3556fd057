"""The kinds of experiment beyond plain, one package each (DESIGN.md "Kinds of experiment").

Each package holds all of its kind: its table of the experiment file (``table``), its
plan, its state file, its boot-side work and its status part, and its ``kind`` module's
subclass of ``supervisor.boot.kinds.plain.Plain``, registered by name in
``supervisor.boot.kinds``.  The core (commands, boot, views, launch, platforms, state)
never imports a kind's package (.importlinter says so); only the experiment model
imports each kind's ``table``, as the experiment file's schema is their union.  Nothing
is imported here: importing one kind's table loads no other kind.
"""
