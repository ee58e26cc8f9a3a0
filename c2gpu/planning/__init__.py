"""The plan of a ported nest as data, and the decisions that fill it: shared-memory tiles (greedy knapsack) and array
elements kept in registers."""
