"""c2gpu: is this sequential C loop nest worth porting to a GPU, and what would the kernel look like?"""
__version__ = "0.1.0"
