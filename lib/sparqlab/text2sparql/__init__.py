"""The TEXT2SPARQL challenge in one wing (docs/ck25.md, "The wing"): the editions' loaders, the CK25 KG's store,
result sets, answers files and the engine report, the peers' readers and adapters, a method as a challenge
endpoint, the leaderboard.

It sits above the experiments (docs/DESIGN.md); nothing below imports it. Its datasets, its KG store and its
methods are reached by name through the plug-in tables of :mod:`sparqlab.core.plugins`.
"""
