"""The five petri simulations; :mod:`discogym.suites.petri.sims.registry` finds them by name."""
