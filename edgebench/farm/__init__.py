"""Board farms on labgrid (level 2): reserve a place from a labgrid coordinator, reach its board.

edgebench does not build a farm of its own: a labgrid coordinator knows the places (boards with
tags), exporters on the board hosts serve their serial ports (RFC 2217 through ser2net), SSH
services and power switches. This package is edgebench's client of that:

* :mod:`edgebench.farm.spec` parses ``--board labgrid:PLACE`` / ``labgrid:TAG=VALUE`` (no labgrid import);
* :mod:`edgebench.farm.coordinator` is a session with the coordinator through labgrid's own client
  (imported lazily: without the ``edgebench[farm]`` extra, one line says how to install it);
* :mod:`edgebench.farm.lease` reserves, acquires and releases a place and says how to reach it;
* :mod:`edgebench.farm.fanout` runs one edgebench command on every matching place in parallel.

See docs/farm.md.
"""
