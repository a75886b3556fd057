"""One boot of the supervisor, and the start/finish/abort paths beside it."""
