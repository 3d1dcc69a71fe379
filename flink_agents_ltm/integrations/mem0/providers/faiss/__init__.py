"""FAISS: the backend and the index files it keeps beside them."""
