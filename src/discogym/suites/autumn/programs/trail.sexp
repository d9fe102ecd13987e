; Trail: ants (brown) wander at random from their nest (purple); an ant that steps onto food (green) picks a
; crumb up (it turns orange) and walks straight home, one cell a step, along the longer gap first; at the nest it
; drops the crumb and the store (yellow bar, top) grows by one. Each food heap holds three crumbs, so ants keep
; coming back to it. A click on an empty cell puts a heap there; up sends a new ant out (up to eight).
(program
  (= GRID_SIZE 14)
  (object Nest (list (Cell 0 0 "purple") (Cell 1 0 "purple") (Cell 0 1 "purple") (Cell 1 1 "purple")))
  (object Food (: crumbs Int) (Cell 0 0 "green"))
  (object Ant (: load Bool) (Cell 0 0 (if load then "orange" else "brown")))
  (object Store (: amount Int) (map (--> i (Cell i 0 "yellow")) (range 0 amount)))
  (= home (Position 6 12))
  (= nest (Nest home))
  (= steps (list (Position 1 0) (Position -1 0) (Position 0 1) (Position 0 -1)))
  (= toward (--> (from to) (let (= d (displacement from to))
    (if (> (abs (.. d x)) (abs (.. d y))) then (Position (sign (.. d x)) 0) else (Position 0 (sign (.. d y)))))))
  (= inside (--> p (& (isWithinBounds p) (> (.. p y) 0))))
  (= foodAt (--> p (any (--> f (== (.. f origin) p)) (prev food))))
  (= march (--> a (if (.. a load)
    then (if (== (.. a origin) home) then (updateObj a "load" false)
          else (updateObj a "origin" (addPositions (.. a origin) (toward (.. a origin) home))))
    else (let (= spot (addPositions (.. a origin) (uniformChoice steps)))
      (if (! (inside spot)) then a
       else (if (foodAt spot) then (updateObj (updateObj a "origin" spot) "load" true)
       else (updateObj a "origin" spot)))))))
  (= ants (initnext (list (Ant false home) (Ant false home) (Ant false home)) (map march (prev ants))))
  (= delivered (--> () (length (filter (--> a (& (.. a load) (== (.. a origin) home))) (prev ants)))))
  (= store (initnext (Store 0 (Position 0 0)) (updateObj (prev store) "amount" (% (+ (.. (prev store) amount) ((delivered))) 15))))
  (= taken (--> f (length (filter (--> a (& (.. a load) (& (! (any (--> b (& (== (.. b id) (.. a id)) (.. b load))) (prev ants)))
                                                           (== (.. a origin) (.. f origin))))) ants))))
  (= food (initnext (list (Food 3 (Position 2 3)) (Food 3 (Position 11 5)))
    (filter (--> f (> (.. f crumbs) 0)) (map (--> f (updateObj f "crumbs" (- (.. f crumbs) (taken f)))) (prev food)))))
  (on (& (& clicked (inside click)) (isFreePos click)) (= food (addObj food (Food 3 click))))
  (on (& up (< (length ants) 8)) (= ants (addObj ants (Ant false home))))
)
