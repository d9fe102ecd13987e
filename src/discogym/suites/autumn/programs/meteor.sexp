; Meteor: meteors (brown) appear at random along the top every third step and fall one cell every other step.
; Left and right move the ship (cyan, three cells wide, bottom); up fires a shot (white) from its middle that
; flies up one cell a step. A shot that meets a meteor destroys both and the score bar (yellow, top) grows by
; one. A meteor that reaches the ship clears the score; one that reaches the bottom is gone.
(program
  (= GRID_SIZE 12)
  (object Ship (list (Cell -1 0 "cyan") (Cell 0 0 "cyan") (Cell 1 0 "cyan")))
  (object Shot (Cell 0 0 "white"))
  (object Rock (Cell 0 0 "brown"))
  (object Score (: points Int) (map (--> i (Cell i 0 "yellow")) (range 0 points)))
  (= tick (initnext 0 (% (+ (prev tick) 1) 6)))
  (= ship (initnext (Ship (Position 6 11)) (prev ship)))
  (= near (--> (a b) (& (== (.. a x) (.. b x)) (| (== (.. a y) (.. b y)) (== (.. a y) (- (.. b y) 1))))))
  (= struck (--> r (any (--> s (near (.. r origin) (.. s origin))) (prev shots))))
  (= landed (--> r (& (== (.. (.. r origin) y) 10) (<= (abs (- (.. (.. r origin) x) (.. (.. ship origin) x))) 1))))
  (= fire (initnext false false))
  (= shots (initnext (list) (let (= flying
    (map moveUp (filter (--> s (& (> (.. (.. s origin) y) 0) (! (any (--> r (near (.. r origin) (.. s origin))) (prev rocks)))))
                        (prev shots))))
    (if (& fire (< (length flying) 4)) then (addObj flying (Shot (Position (.. (.. ship origin) x) 10))) else flying))))
  (= fall (--> r (if (== (% tick 2) 0) then (moveDown r) else r)))
  (= rocks (initnext (list)
    (let (= left (filter (--> r (& (! (struck r)) (! (landed r)))) (prev rocks)))
         (= moved (filter (--> r (< (.. (.. r origin) y) 12)) (map fall left)))
      (if (== (% tick 3) 0) then (addObj moved (Rock (Position (uniformChoice (range 0 12)) 1))) else moved))))
  (= score (initnext (Score 0 (Position 0 0))
    (if (any landed (prev rocks)) then (updateObj (prev score) "points" 0)
     else (updateObj (prev score) "points"
            (% (+ (.. (prev score) points) (length (filter struck (prev rocks)))) 13)))))
  (= slide (--> dx (let (= x (+ (.. (.. ship origin) x) dx)) (if (& (>= x 1) (<= x 10)) then (Ship (Position x 11)) else ship))))
  (on left (= ship (slide -1)))
  (on right (= ship (slide 1)))
  (on up (= fire true))
)
