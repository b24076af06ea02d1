"""The five papers' reproduction code, one module per paper, built on the library.

Each module holds what only its paper needs: tables, worked examples and counterexample data, task
builders, protocol runners and verdict helpers. The notebooks import from here and from the library;
estimators in `lrank.models` never hold paper code.

============================  ==============================================
``lrank.papers.rankboost``       Freund, Iyer, Schapire, Singer 2003 (01)
``lrank.papers.adarank``         Xu, Li 2007 (02)
``lrank.papers.boostingtree``    Kocsis, György, Bán 2013 (03)
``lrank.papers.tree_fitting``    Xia, Zhai, Wang (04)
``lrank.papers.rankboost_plus``  Connamacher, Pancha, Liu, Ray 2020 (05)
============================  ==============================================
"""
