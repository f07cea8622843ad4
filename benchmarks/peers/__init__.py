"""Reference implementations the benchmarks time confeval against: transcriptions, in numpy,
of the public code each file names (repository @ commit, file, function), kept as close to the
original's operations as a transcription allows so that their timings are the peers' own.

Each is tested equal to confeval on random inputs (``tests/benchmarks/test_peers.py``); where
a peer's definition differs from confeval's (LM-Polygraph's CSL averages attention over heads
before normalising), the test names the input on which they agree. Nothing here is imported by
confeval; torch-based originals are transcribed with the numpy operation each torch call makes.
"""
