"""The commands that work across suites, written once against the suite object
(:class:`confeval.suites.base.Suite`), naming no suite: :mod:`.score` (every scoring command),
:mod:`.run` (a live run), :mod:`.rerun`, :mod:`.compare`, :mod:`.guarantee` (certify and
apply), :mod:`.importing` and :mod:`.demo`. Each reads an input through the suite's one loader,
so a run folder is read the same way by every command. The command line (:mod:`confeval.cli`)
only parses, calls these and prints."""
