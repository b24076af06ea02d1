/* MathJax 2 (the copy jupyter-server-mathjax ships, rendered as native MathML): letters in a TeX alphabet
   (\mathcal, \mathscr, \mathfrak, \mathbb and their bold forms) become the Unicode mathematical letters they
   stand for, with mathvariant "normal". Browsers do not draw MathML's mathvariant themselves, and for it
   MathJax's NativeMML output asks for its own TeX web fonts (MathJax_Script-Regular.otf, ...), which the
   offline copy does not have: a 404 on the page. The letters are drawn from the STIX-Web fonts that are
   shipped (_static/lrank-math.css). conf.py inlines it as a MathJax configuration script (text/x-mathjax-config). */
MathJax.Hub.Register.StartupHook("TeX Jax Ready", function () {
  // variant: [first capital, first small letter, {letter: code point of a letter Unicode had before}]
  var script = [0x1D49C, 0x1D4B6, {B: 0x212C, E: 0x2130, F: 0x2131, H: 0x210B, I: 0x2110, L: 0x2112,
                                   M: 0x2133, R: 0x211B, e: 0x212F, g: 0x210A, o: 0x2134}];
  var boldScript = [0x1D4D0, 0x1D4EA, {}];
  var ALPHABETS = {
    "script": script, "-tex-caligraphic": script, "bold-script": boldScript,
    "-tex-caligraphic-bold": boldScript,
    "fraktur": [0x1D504, 0x1D51E, {C: 0x212D, H: 0x210C, I: 0x2111, R: 0x211C, Z: 0x2128}],
    "bold-fraktur": [0x1D56C, 0x1D586, {}],
    "double-struck": [0x1D538, 0x1D552, {C: 0x2102, H: 0x210D, N: 0x2115, P: 0x2119, Q: 0x211A,
                                         R: 0x211D, Z: 0x2124}]
  };
  function letters(text, alphabet) {
    return text.replace(/[A-Za-z]/g, function (c) {
      if (alphabet[2][c]) return String.fromCodePoint(alphabet[2][c]);
      var small = c >= "a";
      return String.fromCodePoint(alphabet[small ? 1 : 0] + c.charCodeAt(0) - (small ? 97 : 65));
    });
  }
  function walk(node, variant) {
    if (!node || typeof node !== "object") return;
    if (node.mathvariant) variant = node.mathvariant;  // set on a token, or on an mstyle around it
    var alphabet = ALPHABETS[variant];
    if (node.isToken && alphabet) {
      for (var i = 0; i < node.data.length; i++) {
        var chars = node.data[i];
        if (chars && chars.data) {
          for (var j = 0; j < chars.data.length; j++) chars.data[j] = letters(chars.data[j], alphabet);
        }
      }
      node.mathvariant = "normal";
      return;
    }
    if (alphabet && node.mathvariant) node.mathvariant = "normal";
    for (var k = 0; k < (node.data || []).length; k++) walk(node.data[k], variant);
  }
  // data.math is the element jax; its root is the math element
  MathJax.InputJax.TeX.postfilterHooks.Add(function (data) { walk(data.math.root, null); });
});
