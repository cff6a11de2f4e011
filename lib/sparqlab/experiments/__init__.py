"""Experiments over many runs: grids of method configurations × datasets as data (``grid``), their execution on
this machine or a Slurm cluster (``sweep``, ``executors``), and the one table that compares them (``table``).

Each cell of a grid is an ordinary run (:mod:`sparqlab.runs`): its own folder and run id, resumable, and shared
with a single ``sparqlab run`` of the same configuration.
"""
