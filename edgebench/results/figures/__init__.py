"""One typed declaration per kind of figure a run holds (level 0); see :mod:`edgebench.results.types`.

=============  ==========================================  ===============================
kind           declaration                                  where in run.json
=============  ==========================================  ===============================
latency        :class:`latency.LatencyFigure`               ``latency.<stage>``
throughput     :class:`latency.Throughput`                  ``throughput``
energy         :class:`energy.PowerSection`                 ``power``
accuracy       :class:`accuracy.AccuracyFigure`             ``extra.accuracy``
thermal        :class:`thermal.ThermalSection`,             ``thermal``, ``extra.soak``
               :class:`thermal.SoakFigure`
points         :class:`points.Point`                        ``extra.points``
verify         :class:`verify.VerifyFigure`                 ``extra.verify``
profile        :class:`profile.ProfileFigure`               ``extra.profile``
layer error    :class:`layer_error.LayerErrorFigure`        ``extra.layer_error``
selftest       :class:`selftest.SelftestFigure`             ``extra.selftest``
device         :class:`device.MacRate`,                     ``extra.mac_rate``, ``extra.memory``
               :class:`device.MemoryFigure`
=============  ==========================================  ===============================
"""
