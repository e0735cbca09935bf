#!/usr/bin/env bash
# Fetches the photos that calibrate the perceptual quality target (SSIMULACRA2) into
# Benchmarks/.calibration/photos/ (git-ignored), once: the .complete stamp marks a finished download; safe to
# run again. Like corpus.sh it takes them from Debian packages (apt-get download + dpkg -x), but from packages
# that neither the benchmark corpus (mate-backgrounds, lomiri-wallpapers-16.04, lomiri-wallpapers-20.04) nor
# the issue's own judging (plasma-workspace-wallpapers) used, so that a target tuned on these is measured on
# photos it has not seen. Only camera photographs (each one looked at; the wallpaper packages' digital art,
# renders and screenshots left out), at least 1.5 MP, JPEG or PNG. 21 photos, 2.0-12.2 MP, ~220 MB of .debs:
#
#   package                  licence (debian/copyright)   photos
#   lxqt-themes              LGPL-2.1+ (Files: *)          11: landscapes, sky, sunset, fog, macro/foliage
#   palapeli-data            GPL-2+                         2: bee on aster, chameleon in leaves
#   digikam-data             GPL-2+                         1: lake and red hill (iPhone 7, 12 MP)
#   libelementary-data       BSD-2-clause                   1: two people indoors, dim light (8 MP)
#   forensics-samples-files  CC-BY-SA-4.0 (original-files)  4: phone photos, 12 MP: three at night indoors
#                                                              (one with EXIF orientation 3), dogs under trees
#   libjxl-testdata          BSD-3-clause (Google)          1: flowers (PNG, 3.4 MP)
#   visp-images-data         GPL-2                          1: Solvay conference 1927, B&W group portrait (faces)
#
# Looked at and not used: ukui-wallpapers (all 12 are digital art), lomiri-wallpapers, gnome-backgrounds,
# sway-backgrounds, desktop-base, xfdesktop4-data (art), jigzo-data, kmahjongg, kbounce, krita-data,
# scribus-template, cimg-examples, labelme-examples (screenshots), hugin-data (no photo of 1.5 MP).
# Four of the photos were already compressed hard by their packages (JPEG quality ~50-60: Butterfly-Kenneth-Wimer,
# european-honey-bee, panther-chameleon-female, Solvay_conference_1927); they are kept (uploads are often
# recompressed) and named in PHOTOS.txt. No city street at 1.5 MP was found (palapeli's night bridge is 1.2 MP).
# The files are named PACKAGE--NAME; PHOTOS.txt says what each one shows.
set -euo pipefail
cd "$(dirname "$0")/.."
cal=Benchmarks/.calibration
# package|path inside the package (under usr/share/)|what it is
photos=(
  "lxqt-themes|lxqt/wallpapers/after-the-rain.jpg|sunset behind storm clouds, dark ground (Pentax K-7)"
  "lxqt-themes|lxqt/wallpapers/fog.jpg|fog over a field and hills"
  "lxqt-themes|lxqt/wallpapers/this-is-not-windows.jpg|green hills, blue sky, poplars"
  "lxqt-themes|lxqt/wallpapers/appleflower.png|apple blossom, blurred green background"
  "lxqt-themes|lxqt/wallpapers/butterfly.png|swallowtail on a thistle, dark background"
  "lxqt-themes|lxqt/wallpapers/flowers.png|meadow of anemones, shallow depth of field"
  "lxqt-themes|lxqt/wallpapers/cloud.png|altocumulus sky"
  "lxqt-themes|lxqt/wallpapers/drop.png|water drop on a grass blade"
  "lxqt-themes|lxqt/wallpapers/Valendas.png|mountain ridges under clouds (Pentax K100D; RGBA, opaque)"
  "lxqt-themes|lxqt/wallpapers/beam.png|sunbeam through clouds over forested hills, dark"
  "lxqt-themes|lxqt/wallpapers/Butterfly-Kenneth-Wimer.jpg|butterfly on seed heads, pale background (precompressed, q~55)"
  "palapeli-data|palapeli/collection/european-honey-bee.jpg|bee on an aster (Nikon D50; precompressed, progressive)"
  "palapeli-data|palapeli/collection/panther-chameleon-female.jpg|chameleon among leaves (Kodak; precompressed, progressive)"
  "digikam-data|digikam/about/images/body-background.jpg|lake, red hill, reflections (iPhone 7, 12 MP)"
  "libelementary-data|elementary/images/insanely_huge_test_image.jpg|two men indoors at night, faces (8 MP)"
  "forensics-samples-files|forensics-samples/original-files/pic1/IMG_20200827_231612.jpg|circuit board close-up, night (Mi A3)"
  "forensics-samples-files|forensics-samples/original-files/pic2/IMG_20191224_234846.jpg|dinner table and framed pictures, night indoors (Mi A3)"
  "forensics-samples-files|forensics-samples/original-files/pic2/IMG_20200124_231153.jpg|white dog on tiles, night indoors, EXIF orientation 3 (Mi A3)"
  "forensics-samples-files|forensics-samples/original-files/pic2/IMG_20200608_111614.jpg|two white dogs on grass under trees (Mi A3)"
  "libjxl-testdata|libjxl-testdata/jxl/flower/flower.png|pink daisies (PNG)"
  "visp-images-data|visp-images-data/ViSP-images/Solvay/Solvay_conference_1927_Version2_2126x1463.jpg|Solvay conference 1927, B&W group portrait (precompressed)"
)
if [ ! -f "$cal/.complete" ]; then
  rm -rf "$cal" && mkdir -p "$cal/photos"
  packages=$(printf '%s\n' "${photos[@]}" | cut -d'|' -f1 | sort -u)
  for package in $packages; do
    echo "calibration: $package" >&2
    (cd "$cal" && apt-get download "$package" >/dev/null 2>&1 && dpkg -x "$package"_*.deb "pkg-$package") ||
      { echo "error: could not fetch $package (apt-get update first?)" >&2; exit 1; }
  done
  for entry in "${photos[@]}"; do
    IFS='|' read -r package path what <<< "$entry"
    cp "$cal/pkg-$package/usr/share/$path" "$cal/photos/$package--$(basename "$path")"
    echo "$package--$(basename "$path")	$what" >> "$cal/PHOTOS.txt"
  done
  # The unpacked packages are large (visp-images-data alone is 220 MB) and hold nothing else we use.
  rm -rf "$cal"/pkg-* "$cal"/*.deb
  touch "$cal/.complete"
fi
