"""Weak learners: binary stumps, single-feature rankers, histogram regression trees."""
