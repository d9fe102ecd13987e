; Particles: a click releases a particle; every particle takes a random step each time (walls stop it).
(program
  (= GRID_SIZE 16)
  (object Particle (Cell 0 0 "blue"))
  (= directions (list (Position 0 1) (Position 0 -1) (Position 1 0) (Position -1 0) (Position 0 0)))
  (= particles (initnext (list (Particle (Position 8 8)))
    (map (--> p (moveNoCollision p (uniformChoice directions))) (prev particles))))
  (on clicked (= particles (addObj particles (Particle click))))
)
