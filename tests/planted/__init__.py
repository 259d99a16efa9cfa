"""Planted bugs: copies of spec functions with one deliberate mistake, each keeping the original's
contract. tests/test_symbolic.py runs CrossHair on them and expects a counterexample for each;
nothing else imports them."""
