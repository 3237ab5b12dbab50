"""What makes two calls one: normalization rules, the replay key and its index, repeats,
volatile values, URL spellings, the nearest recorded call, and checks of the rules."""
