#!/usr/bin/env bash
# Makes DejaVuSans-subset.ttf, the font `simrec plot` draws PNG text with: DejaVu Sans
# (Debian's fonts-dejavu-core, /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf) cut to the
# characters of key names, units and axis labels (ASCII, Latin-1, Greek, super- and
# subscripts, a few signs), with fontTools (`pip install fonttools`). The licence
# (LICENSE.txt beside it) allows modified copies under a name without "Bitstream" or "Vera".
set -euo pipefail
cd "$(dirname "$0")"
pyftsubset /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf \
    --unicodes='U+0020-007E,U+00A0-00FF,U+0391-03C9,U+2013-2014,U+2026,U+2070-209F,U+2212,U+2218,U+221A,U+00B7' \
    --layout-features='' --no-hinting --desubroutinize \
    --output-file=DejaVuSans-subset.ttf
