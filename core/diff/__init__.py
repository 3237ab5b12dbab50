"""Two runs side by side: alignment (and its choice), refinement, drift, the result, diagnosis."""
