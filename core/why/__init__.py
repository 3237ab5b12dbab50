"""From where two runs part to why: which of the responses that differ between a failing
and a passing run make the agent fail (``bisect``), and the same question for one response
(``swap``). Built on the gate: every question is answered by N offline replays of a
cassette made for it, network off."""
