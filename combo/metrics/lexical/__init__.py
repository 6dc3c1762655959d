"""Lexical metrics: n-gram precision/recall, edit rates, character n-grams, alignments."""
