"""Text analysis shared by metrics: tokenisation, n-grams, parses, trees and kernels, embeddings, the analysis cache
and the trees a user supplies (a test bed's, see :mod:`.supplied`)."""
