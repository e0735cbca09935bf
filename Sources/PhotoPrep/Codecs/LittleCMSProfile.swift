internal import CLCMS2

/// ICC profiles made by Little CMS (`cmsCreateRGBProfile`, `cmsSaveProfileToMem`), and profiles checked by it: the only code
/// calling lcms2.
enum LittleCMSProfile {
    /// Whether Little CMS reads `profile` as an ICC profile (its header and tag directory).
    static func opens(_ profile: [UInt8]) -> Bool {
        let handle = profile.withUnsafeBytes { cmsOpenProfileFromMem($0.baseAddress, cmsUInt32Number($0.count)) }
        guard let handle else { return false }
        cmsCloseProfile(handle)
        return true
    }

    /// An RGB matrix/TRC profile (ICC v4) for the primaries and white point given as CIE xy chromaticities
    /// and one tone curve, an ICC parametric curve (`type` 1: Y = X^g; 4: Y = (aX + b)^g for X ≥ d, else
    /// cX — `parameters` [g] or [g, a, b, c, d]). Nil when lcms2 refuses the description.
    static func rgb(
        red: (Double, Double), green: (Double, Double), blue: (Double, Double), white: (Double, Double),
        curveType: Int32, parameters: [Double], description: String
    ) -> [UInt8]? {
        var whitePoint = cmsCIExyY(x: white.0, y: white.1, Y: 1)
        var primaries = cmsCIExyYTRIPLE(
            Red: cmsCIExyY(x: red.0, y: red.1, Y: 1), Green: cmsCIExyY(x: green.0, y: green.1, Y: 1),
            Blue: cmsCIExyY(x: blue.0, y: blue.1, Y: 1))
        guard let curve = cmsBuildParametricToneCurve(nil, curveType, parameters) else { return nil }
        defer { cmsFreeToneCurve(curve) }
        var curves: [OpaquePointer?] = [curve, curve, curve]
        guard let profile = cmsCreateRGBProfile(&whitePoint, &primaries, &curves) else { return nil }
        defer { cmsCloseProfile(profile) }
        for (tag, text) in [(photoprep_cms_description_tag(), description), (photoprep_cms_copyright_tag(), "No copyright, use freely")] {
            guard let mlu = cmsMLUalloc(nil, 1) else { return nil }
            defer { cmsMLUfree(mlu) }
            guard cmsMLUsetASCII(mlu, "en", "US", text) != 0, cmsWriteTag(profile, tag, UnsafeRawPointer(mlu)) != 0 else { return nil }
        }
        guard cmsMD5computeID(profile) != 0 else { return nil }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return nil }
        var saved = false
        let bytes = [UInt8](unsafeUninitializedCapacity: Int(size)) { out, count in
            saved = cmsSaveProfileToMem(profile, out.baseAddress, &size) != 0
            count = saved ? Int(size) : 0
        }
        return saved ? bytes : nil
    }
}
