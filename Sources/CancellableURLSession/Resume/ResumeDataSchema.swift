import Foundation

/// The versioned format both kinds of resume data are written in, and what they share of it (the article "The resume
/// data format"): a `version`, a `kind`, the destination as a path, the partial file as a name in its folder, the
/// validator as a plain object, URLs as strings and ranges as pairs. Each read checks the shape of what it reads and
/// names the field it refuses; what a value means is checked by the resume data's own rules afterwards.
enum ResumeDataSchema {
    /// The version this library writes, and the newest it reads.
    static let version = 1

    /// Which resume data a document holds.
    enum Kind: String, Sendable {
        /// ``DownloadResumeData``.
        case single
        /// ``SegmentedDownloadResumeData``.
        case segmented

        /// The type that reads it.
        var typeName: String {
            switch self {
            case .single: "DownloadResumeData"
            case .segmented: "SegmentedDownloadResumeData"
            }
        }
    }
}

/// The coding keys of a kind of resume data: those of the fields every kind has.
protocol ResumeDataCodingKey: CodingKey {
    static var version: Self { get }
    static var kind: Self { get }
    static var destination: Self { get }
    static var partialFile: Self { get }
    static var validator: Self { get }
}

extension ResumeDataCodingKey {
    /// The key of a field of the partial file reference.
    static func key(_ field: PartialFileReference.Field) -> Self {
        switch field {
        case .destination: .destination
        case .partialFile: .partialFile
        }
    }
}

extension KeyedDecodingContainer where Key: ResumeDataCodingKey {
    /// Reads `version` and `kind`, and refuses a version newer than this library reads or resume data of another
    /// kind.
    ///
    /// - Returns: `false` if there is no `version`: the format from before versions, which the caller reads as it was
    ///   read then.
    func decodeVersion(of expected: ResumeDataSchema.Kind) throws -> Bool {
        guard contains(.version) else { return false }
        let version = try decodeInteger(Int.self, forKey: .version)
        if version > ResumeDataSchema.version {
            throw refusing(
                .version,
                "version \(version) is newer than this library reads (\(ResumeDataSchema.version))"
            )
        }
        if version < 1 { throw refusing(.version, "version \(version) is not a version: the first is 1") }
        let name = try decodeString(forKey: .kind)
        guard let kind = ResumeDataSchema.Kind(rawValue: name) else {
            throw refusing(.kind, "kind \(name.debugDescription) is neither \"single\" nor \"segmented\"")
        }
        guard kind == expected else {
            throw refusing(
                .kind,
                "\"\(kind.rawValue)\" resume data is read as \(kind.typeName), not \(expected.typeName)"
            )
        }
        return true
    }

    /// Reads the destination, an absolute path, and the partial file, a name in the destination's folder.
    /// ``PartialFileReference/problem`` checks the rest: no `..` in the path, a name of the library's form.
    func decodePartialFileReference() throws -> PartialFileReference {
        do {
            return try PartialFileReference(
                destinationPath: decodeString(forKey: .destination),
                partialFileName: decodeString(forKey: .partialFile)
            )
        } catch let problem as PartialFileReference.Problem {
            throw refusing(.key(problem.field), problem.reason)
        }
    }

    /// Reads the validator, if there is one: `{"kind": "entityTag" or "lastModified", "value": a string}`. Whether the
    /// value may be sent is checked by the resume data (``DownloadResumeData/Validator/isWellFormed``).
    func decodeValidator() throws -> DownloadResumeData.Validator? {
        guard contains(.validator), try !decodeNil(forKey: .validator) else { return nil }
        guard let object = try? nestedContainer(keyedBy: ValidatorKey.self, forKey: .validator),
            let kind = try? object.decode(String.self, forKey: .kind),
            let value = try? object.decode(String.self, forKey: .value)
        else { throw refusing(.validator, "it is not an object with a kind and a value, both strings") }
        switch kind {
        case "entityTag": return .entityTag(value)
        case "lastModified": return .lastModified(value)
        default: throw refusing(.validator, "kind \(kind.debugDescription) is neither entityTag nor lastModified")
        }
    }
}

extension KeyedDecodingContainer {
    /// Reads a string, and refuses any other value naming the key.
    func decodeString(forKey key: Key) throws -> String {
        try requireValue(forKey: key)
        guard let string = try? decode(String.self, forKey: key) else { throw refusing(key, "it is not a string") }
        return string
    }

    /// Reads a whole number of type `T`, and refuses any other value naming the key — a fraction, a number past
    /// `T`'s range (which `JSONDecoder` reports as invalid JSON, with no coding path), a string.
    func decodeInteger<T: FixedWidthInteger & Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try requireValue(forKey: key)
        guard let value = try? decode(type, forKey: key) else {
            throw refusing(key, "it is not an integer of \(T.bitWidth) bits")
        }
        return value
    }

    /// Reads a whole number of type `T` if there is one (neither missing nor `null`), as ``decodeInteger(_:forKey:)``.
    func decodeIntegerIfPresent<T: FixedWidthInteger & Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decodeInteger(type, forKey: key)
    }

    /// Reads the integrity, if there is one (neither missing nor `null`), as ``DownloadIntegrity`` reads itself; a
    /// value it cannot read is refused naming the key. Whether it can be checked is checked by the resume data.
    func decodeIntegrityIfPresent(forKey key: Key) throws -> DownloadIntegrity? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        do {
            return try decode(DownloadIntegrity.self, forKey: key)
        } catch {
            throw refusing(key, "it is not an object of a length, a sha256 and pieces: \(error)")
        }
    }

    /// Reads a URL written as a string; whether it is one a download may use is checked by the resume data.
    func decodeURLString(forKey key: Key) throws -> URL {
        let string = try decodeString(forKey: key)
        guard let url = URL(string: string) else { throw refusing(key, "\(string.debugDescription) is not a URL") }
        return url
    }

    /// Reads a list of at most `limit` URLs written as strings: a longer list is refused before any is parsed.
    func decodeURLStrings(forKey key: Key, atMost limit: Int) throws -> [URL] {
        try requireValue(forKey: key)
        guard let strings = try? decode([String].self, forKey: key) else {
            throw refusing(key, "it is not a list of strings")
        }
        if strings.count > limit { throw refusing(key, "\(strings.count) URLs are more than \(limit)") }
        return try strings.map { string in
            guard let url = URL(string: string) else { throw refusing(key, "\(string.debugDescription) is not a URL") }
            return url
        }
    }

    /// Reads byte ranges written as half-open `[start, end]` pairs of integers. Whether they fit the file is checked
    /// by the resume data.
    func decodeRangePairs(forKey key: Key) throws -> [Range<Int64>] {
        try requireValue(forKey: key)
        guard let pairs = try? decode([[Int64]].self, forKey: key) else {
            throw refusing(key, "it is not a list of [start, end] pairs of 64-bit integers")
        }
        return try pairs.enumerated().map { index, pair in
            guard pair.count == 2 else { throw refusing(key, "range \(index), \(pair), is not a pair [start, end]") }
            guard pair[0] <= pair[1] else { throw refusing(key, "range \(index), \(pair), ends before it starts") }
            return pair[0]..<pair[1]
        }
    }

    /// Throws `DecodingError.keyNotFound` if there is no value at `key`, as `decode(_:forKey:)` would.
    func requireValue(forKey key: Key) throws {
        guard !contains(key) else { return }
        throw DecodingError.keyNotFound(
            key,
            DecodingError.Context(codingPath: codingPath, debugDescription: "there is no \(key.stringValue)")
        )
    }

    /// The error that refuses the value at `key`, naming it.
    func refusing(_ key: Key, _ reason: String) -> DecodingError {
        DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: reason)
    }
}

extension KeyedEncodingContainer where Key: ResumeDataCodingKey {
    /// Writes the current `version` and `kind`.
    mutating func encodeVersion(of kind: ResumeDataSchema.Kind) throws {
        try encode(ResumeDataSchema.version, forKey: .version)
        try encode(kind.rawValue, forKey: .kind)
    }

    /// Writes the destination as its absolute path and the partial file as its name in the destination's folder.
    mutating func encodePartialFileReference(_ file: PartialFileReference) throws {
        try encode(file.destinationPath, forKey: .destination)
        try encode(file.partialFileName, forKey: .partialFile)
    }

    /// Writes the validator, if there is one, as `{"kind": …, "value": …}`.
    mutating func encodeValidator(_ validator: DownloadResumeData.Validator?) throws {
        guard let validator else { return }
        var object = nestedContainer(keyedBy: ValidatorKey.self, forKey: .validator)
        switch validator {
        case .entityTag(let tag):
            try object.encode("entityTag", forKey: .kind)
            try object.encode(tag, forKey: .value)
        case .lastModified(let date):
            try object.encode("lastModified", forKey: .kind)
            try object.encode(date, forKey: .value)
        }
    }
}

extension KeyedEncodingContainer {
    /// Writes byte ranges as half-open `[start, end]` pairs.
    mutating func encodeRangePairs(_ ranges: [Range<Int64>], forKey key: Key) throws {
        try encode(ranges.map { [$0.lowerBound, $0.upperBound] }, forKey: key)
    }
}

/// The fields of a validator's object.
private enum ValidatorKey: String, CodingKey {
    case kind, value
}
