; Crystal: a click on an empty cell sets a seed crystal there. Every step the crystal grows into each empty cell
; that touches exactly one crystal cell (left, right, above or below), so it branches into snowflake shapes; each
; step's growth has the next colour of four (white, cyan, blue, violet). A click's step adds the seed but grows
; nothing. Up melts everything.
(program
  (= GRID_SIZE 15)
  (object Ice (: shade Int) (Cell 0 0 (at (list "white" "cyan" "blue" "violet") shade)))
  (= touching (--> p (length (filter (--> q (! (isFreePos q))) (adjPositions p)))))
  (= sprouts (--> fr (filter (--> p (& (isFreePos p) (== (touching p) 1))) (concat (map adjPositions fr)))))
  (= age (initnext 0 (% (+ (prev age) 1) 4)))
  (= front (initnext (list (Position 7 7)) (sprouts (prev front))))
  (= ice (initnext (list (Ice 0 (Position 7 7))) (concat (list (prev ice) (map (--> p (Ice age p)) front)))))
  (on (& clicked (isFreePos click)) (let (= front (addObj front click)) (= ice (addObj ice (Ice age click)))))
  (on up (let (= ice (list)) (= front (list))))
)
