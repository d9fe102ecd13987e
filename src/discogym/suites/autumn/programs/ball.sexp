; Ball: a ball flies diagonally and bounces off the walls; a click turns it around; right speeds it up
; (two cells a step) until left slows it down.
(program
  (= GRID_SIZE 16)
  (object Ball (: dx Int) (: dy Int) (Cell 0 0 "orange"))
  (= speed (initnext 1 (prev speed)))
  (= bounce (--> (v p limit) (if (| (< (+ p v) 0) (> (+ p v) limit)) then (- v) else v)))
  (= fly (--> b (let (= x (.. (.. b origin) x)) (= y (.. (.. b origin) y))
                     (= vx (bounce (.. b dx) x 15)) (= vy (bounce (.. b dy) y 15))
                     (Ball vx vy (Position (+ x vx) (+ y vy))))))
  (= ball (initnext (Ball 1 1 (Position 2 5))
    (if (== speed 2) then (fly (fly (prev ball))) else (fly (prev ball)))))
  (on clicked (= ball (updateObj (updateObj ball "dx" (- (.. ball dx))) "dy" (- (.. ball dy)))))
  (on right (= speed 2))
  (on left (= speed 1))
)
