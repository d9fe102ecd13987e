"""petri (petri-bench): five simulations ("model organisms"), mystery worlds, a blind experiment harness."""
