"""The dealer: commit, deal, reveal (DEAL.md). Only it holds a secret before its reveal."""
