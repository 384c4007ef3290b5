"""Meta-verification: does a verifier's critique describe real defects, and fit its score?"""
