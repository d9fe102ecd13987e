; Sweeper: an 8 x 8 field of covered tiles (gray) hides up to six mines at places drawn at random. A click
; uncovers a tile: a safe tile shows by its colour how many mines touch it, diagonals included (none white, one blue, two
; green, three or more orange); a mine (red) ends the game and shows every mine, and then clicks do nothing.
; Down covers the field again over new mines.
(program
  (= GRID_SIZE 8)
  (object Tile (: open Bool) (: mine Bool) (: count Int)
    (Cell 0 0 (if (! open) then "gray" else (if mine then "red" else (at (list "white" "blue" "green" "orange") count)))))
  (= touches (--> (p ms) (length (filter (--> m (& (!= m p) (& (<= (abs (- (.. m x) (.. p x))) 1) (<= (abs (- (.. m y) (.. p y))) 1)))) ms))))
  (= field (--> ms (map (--> p (Tile false (any (--> m (== m p)) ms) (if (> (touches p ms) 3) then 3 else (touches p ms)) p))
                        (allPositions 8))))
  (= lost (initnext false (prev lost)))
  (= tiles (initnext (field (randomPositions 8 6)) (prev tiles)))
  (= tileAt (--> p (head (filter (--> t (== (.. t origin) p)) tiles))))
  (on (& clicked (! lost)) (let (= t (tileAt click))
    (if (.. t mine) then (let (= lost true) (= tiles (map (--> u (if (.. u mine) then (updateObj u "open" true) else u)) tiles)))
     else (= tiles (map (--> u (if (== (.. u origin) click) then (updateObj u "open" true) else u)) tiles)))))
  (on down (let (= lost false) (= tiles (field (randomPositions 8 6)))))
)
