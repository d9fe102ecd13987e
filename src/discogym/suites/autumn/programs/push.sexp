; Push: the agent pushes the box it walks into, unless a wall is behind the box; the box on the target turns
; green. A click puts the box back.
(program
  (= GRID_SIZE 10)
  (object Agent (Cell 0 0 "blue"))
  (object Box (: done Bool) (Cell 0 0 (if done then "green" else "brown")))
  (object Target (Cell 0 0 "pink"))
  (object Wall (Cell 0 0 "gray"))
  (= walls (concat (list (map (--> i (Wall (Position i 0))) (range 0 10)) (map (--> i (Wall (Position i 9))) (range 0 10))
                         (map (--> i (Wall (Position 0 i))) (range 1 9)) (map (--> i (Wall (Position 9 i))) (range 1 9))
                         (list (Wall (Position 5 4)) (Wall (Position 5 5))))))
  (= target (Target (Position 7 7)))
  (= agent (initnext (Agent (Position 2 2)) (prev agent)))
  (= box (initnext (Box false (Position 3 3)) (updateObj (prev box) "done" (== (.. (prev box) origin) (.. target origin)))))
  (= blocked (--> p (any (--> w (== (.. w origin) p)) walls)))
  (= push (--> dir
    (let (= next (addPositions (.. agent origin) dir))
         (if (blocked next) then agent
          else (if (== next (.. box origin))
                then (if (blocked (addPositions next dir)) then agent
                      else (let (= box (move box dir)) (move agent dir)))
                else (move agent dir))))))
  (on left (= agent (push (Position -1 0))))
  (on right (= agent (push (Position 1 0))))
  (on up (= agent (push (Position 0 -1))))
  (on down (= agent (push (Position 0 1))))
  (on clicked (= box (Box false (Position 3 3))))
)
