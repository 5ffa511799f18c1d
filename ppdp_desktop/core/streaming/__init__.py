"""Releases larger than memory: the in-memory job's stages run over a file read in record batches.

:mod:`.passes` (pass 1 gathers the plan's columns, pass 2 applies the plan a chunk at a time),
:mod:`.shuffle` (the release's order by an external sort on keyed sort keys), :mod:`.job` (pass 2 written to
the data file with its checksum), :mod:`.readback` (the written file re-checked in part) and :mod:`.release`
(the package, published atomically). Qt-free, like the rest of the core.
"""
