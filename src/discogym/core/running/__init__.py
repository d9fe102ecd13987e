"""Running episodes: the one episode driver, sessions of outside clients, planning, the runner and its
executors (local processes, Ray), the run directory, agent lookup and the generic agents, provenance and versions,
and what acts on the whole process (``process``: threads stopped from outside, the event loop, the collector)."""
