; Lights out: clicking a light of the 5 x 5 board switches it and its four neighbours (yellow on, gray off);
; the lamp in the corner turns green when every light is off. Right and left load the next and the previous of
; four puzzles, down starts the current one again.
(program
  (= GRID_SIZE 7)
  (object Light (: on Bool) (Cell 0 0 (if on then "yellow" else "gray")))
  (object Lamp (: solved Bool) (Cell 0 0 (if solved then "green" else "red")))
  (= press (--> (grid spot)
    (map (--> l (if (<= (manhattan (.. l origin) spot) 1) then (updateObj l "on" (! (.. l on))) else l)) grid)))
  (= puzzles (list (list (Position 3 3))
                   (list (Position 1 1) (Position 5 5) (Position 3 3))
                   (list (Position 2 1) (Position 4 1) (Position 1 4) (Position 5 4))
                   (list (Position 1 2) (Position 2 3) (Position 3 4) (Position 4 2) (Position 5 5) (Position 2 5))))
  (= setup (--> n
    (foldl press (map (--> p (Light false (addPositions p (Position 1 1)))) (allPositions 5)) (at puzzles n))))
  (= starts (map (--> n (map (--> l (.. l on)) (setup n))) (range 0 4)))
  (= spots (map (--> p (addPositions p (Position 1 1))) (allPositions 5)))
  (= board (--> n (map (--> i (Light (at (at starts n) i) (at spots i))) (range 0 25))))
  (= level (initnext 0 (prev level)))
  (= lights (initnext (board 0) (prev lights)))
  (= lamp (initnext (Lamp false (Position 6 0))
    (updateObj (prev lamp) "solved" (! (any (--> l (.. l on)) lights)))))
  (on (clicked lights) (= lights (press lights click)))
  (on right (let (= level (% (+ level 1) 4)) (= lights (board level))))
  (on left (let (= level (% (+ level 3) 4)) (= lights (board level))))
  (on down (= lights (board level)))
)
