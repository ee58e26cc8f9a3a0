"""Pure analysis algorithms from Resios' MSc thesis, chapter 6 and section 5.2.1.

Every function takes plain Python data (ints, tuples, small frozen dataclasses,
networkx DiGraphs) and returns plain results; nothing here depends on the loop IR
or the GPU catalog, so callers translate their own structures into these inputs.

Modules:
  banks      -- Algorithm 6.1, shared-memory bank conflicts (+ 2-D tile helpers)
  knapsack   -- Algorithm 6.2, greedy shared-memory opportunity choice (+ exact)
  ilp        -- eq. 6.1, ILP = instructions / longest DFG path
  intensity  -- Algorithm 6.3, on-chip / off-chip arithmetic intensity (+ roofline)
  spills     -- Algorithm 6.4, Belady's MIN spill/reload count, register pressure
  blocksize  -- section 5.2.1, the three block-size strategies (+ shape candidates)
"""
