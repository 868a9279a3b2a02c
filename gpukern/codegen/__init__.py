"""C code generation: one emitter over the typed IR, and a table of spellings per C dialect."""
