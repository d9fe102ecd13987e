; Clouds: two clouds (white) drift with the wind, one cell every other step, and rain: drops (blue) fall
; straight down and make a puddle where they reach the ground. Left and right turn the wind. A click on the sun
; in the corner brings it out (yellow) or hides it (gray); while it shines no rain falls and the puddle dries up,
; one drop every other step.
(program
  (= GRID_SIZE 16)
  (object Sun (: shining Bool) (Cell 0 0 (if shining then "yellow" else "gray")))
  (object Cloud (list (Cell 0 0 "white") (Cell 1 0 "white") (Cell 2 0 "white") (Cell 1 -1 "white")))
  (object Drop (Cell 0 0 "blue"))
  (= ground 15)
  (= sun (initnext (Sun false (Position 15 0)) (prev sun)))
  (= wind (initnext 1 (prev wind)))
  (= tick (initnext 0 (% (+ (prev tick) 1) 2)))
  (= clouds (initnext (list (Cloud (Position 1 3)) (Cloud (Position 9 4)))
    (if (== tick 0) then (map (--> c (moveWrap c (Position wind 0))) (prev clouds)) else (prev clouds))))
  (= onGround (--> d (== (.. (.. d origin) y) ground)))
  (= puddle (--> ds (filter onGround ds)))
  (= fall (--> ds (let (= lying (puddle ds))
    (= falling (map moveDown (filter (--> d (! (onGround d))) ds)))
    (concat (list lying (filter (--> d (! (& (onGround d) (any (--> p (== (.. p origin) (.. d origin))) lying))))
                                falling))))))
  (= rain (--> ds (if (| (.. sun shining) (>= (length ds) 60)) then ds
    else (foldl (--> (acc c) (let (= dx (uniformChoice (list 0 1 2 3 4 5)))
                  (if (> dx 2) then acc
                   else (addObj acc (Drop (Position (wrap (+ (.. (.. c origin) x) dx)) (+ (.. (.. c origin) y) 1)))))))
                ds clouds))))
  (= dry (--> ds (let (= lying (puddle ds))
    (if (& (.. sun shining) (& (== tick 0) (> (length lying) 0))) then (removeObj ds (head lying)) else ds))))
  (= drops (initnext (list) (dry (rain (fall (prev drops))))))
  (on left (= wind -1))
  (on right (= wind 1))
  (on (clicked sun) (= sun (updateObj sun "shining" (! (.. sun shining)))))
)
