"""The runtime layer: what every backend shares between a compiled kernel and a launch.

``variant`` (one specialisation: its IR and its C per dialect), ``plan`` and ``fast_path`` (launch
plans, one per kernel parameter set, and their straight-line Python), ``array`` (``DeviceArray``),
``foreign`` and ``dlpack`` (other libraries' arrays read in place), ``cache`` (the compiled-binary
cache), ``compile_options`` (a kernel's options and their spellings per compiler).  Imports code
generation and below; never a backend, the simulator or a device library such as pyopencl.
"""
