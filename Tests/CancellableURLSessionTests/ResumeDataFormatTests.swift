import Foundation
import Testing

@testable import CancellableURLSession

/// Resume data is written in a documented, versioned JSON format (the article "The resume data format") that later
/// versions still read; read back it is untrusted input, and each value no download could have written is refused
/// with a `DecodingError` whose coding path names the field.
@Suite struct ResumeDataFormatTests {
    static let destination = URL(fileURLWithPath: "/var/mobile/Downloads/video.mp4")
    static let partialFileName = ".video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.partial"
    static let partialFile = URL(fileURLWithPath: "/var/mobile/Downloads/" + partialFileName)
    static let integrity = DownloadIntegrity(
        length: 2_000_000,
        sha256: String(repeating: "0f", count: 32),
        pieces: PieceDigests(
            length: 1_048_576,
            sha256: [String(repeating: "ab", count: 32), String(repeating: "CD", count: 32)]
        )
    )

    static func single() throws -> DownloadResumeData {
        try DownloadResumeData(
            url: URL(string: "https://example.com/files/video.mp4?token=a%20b")!,
            destination: destination,
            partialFile: partialFile,
            bytesKept: 1_500_000,
            validator: .entityTag("\"v1-abc\""),
            totalBytes: 2_000_000,
            integrity: integrity
        )
    }

    static func segmented() throws -> SegmentedDownloadResumeData {
        try SegmentedDownloadResumeData(
            mirrors: [
                URL(string: "https://a.example.com/video.mp4")!, URL(string: "http://b.example.org:8080/v.mp4")!,
            ],
            destination: destination,
            partialFile: partialFile,
            totalBytes: 2_000_000,
            validator: .lastModified("Sun, 06 Nov 1994 08:49:37 GMT"),
            keptRanges: [0..<524_288, 1_048_576..<1_310_720, 1_900_000..<2_000_000],
            integrity: integrity
        )
    }

    /// `value` as JSON with sorted keys.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// `value` as a JSON object, to change before decoding it again.
    static func object(_ value: some Encodable) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any])
    }

    static func decode<T: Decodable>(_ type: T.Type, _ object: [String: Any]) throws -> T {
        try JSONDecoder().decode(type, from: JSONSerialization.data(withJSONObject: object))
    }

    // MARK: What is written

    @Test func singleURLResumeDataIsWrittenAsVersion1OfTheFormat() throws {
        #expect(
            try Self.json(Self.single()) == #"""
                {"bytesKept":1500000,"destination":"\/var\/mobile\/Downloads\/video.mp4",\#
                "integrity":{"length":2000000,"pieces":{"length":1048576,\#
                "sha256":["abababababababababababababababababababababababababababababababab",\#
                "CDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCD"]},\#
                "sha256":"0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f"},"kind":"single",\#
                "partialFile":".video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.partial","totalBytes":2000000,\#
                "url":"https:\/\/example.com\/files\/video.mp4?token=a%20b",\#
                "validator":{"kind":"entityTag","value":"\"v1-abc\""},"version":1}
                """#
        )
    }

    @Test func segmentedResumeDataIsWrittenAsVersion1OfTheFormat() throws {
        #expect(
            try Self.json(Self.segmented()) == #"""
                {"destination":"\/var\/mobile\/Downloads\/video.mp4","integrity":{"length":2000000,\#
                "pieces":{"length":1048576,\#
                "sha256":["abababababababababababababababababababababababababababababababab",\#
                "CDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCD"]},\#
                "sha256":"0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f"},\#
                "keptRanges":[[0,524288],[1048576,1310720],[1900000,2000000]],"kind":"segmented",\#
                "mirrors":["https:\/\/a.example.com\/video.mp4","http:\/\/b.example.org:8080\/v.mp4"],\#
                "partialFile":".video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.partial","totalBytes":2000000,\#
                "validator":{"kind":"lastModified","value":"Sun, 06 Nov 1994 08:49:37 GMT"},"version":1}
                """#
        )
    }

    @Test func fieldsWithoutAValueAreLeftOut() throws {
        let single = try DownloadResumeData(
            url: URL(string: "https://example.com/video.mp4")!,
            destination: Self.destination,
            partialFile: Self.partialFile,
            bytesKept: 0,
            validator: nil,
            totalBytes: nil
        )
        #expect(
            try Self.json(single) == #"""
                {"bytesKept":0,"destination":"\/var\/mobile\/Downloads\/video.mp4","kind":"single",\#
                "partialFile":".video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.partial",\#
                "url":"https:\/\/example.com\/video.mp4","version":1}
                """#
        )
        let segmented = try SegmentedDownloadResumeData(
            mirrors: [URL(string: "https://a.example.com/video.mp4")!],
            destination: Self.destination,
            partialFile: Self.partialFile,
            totalBytes: nil,
            validator: nil,
            keptRanges: []
        )
        #expect(
            try Self.json(segmented) == #"""
                {"destination":"\/var\/mobile\/Downloads\/video.mp4","keptRanges":[],"kind":"segmented",\#
                "mirrors":["https:\/\/a.example.com\/video.mp4"],\#
                "partialFile":".video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.partial","version":1}
                """#
        )
    }

    // MARK: What is read back

    @Test func singleURLResumeDataEncodesAndDecodesToItself() throws {
        let full = try Self.single()
        let bare = try DownloadResumeData(
            url: URL(string: "http://127.0.0.1:8080/f")!,
            destination: Self.destination,
            partialFile: Self.partialFile,
            bytesKept: 0,
            validator: .lastModified("Sunday, 06-Nov-94 08:49:37 GMT"),
            totalBytes: nil
        )
        // The library's own partial file, made next to a destination in a folder that exists.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("format-\(UUID())")
        let made = try DownloadResumeData(
            url: full.url,
            destination: folder.appendingPathComponent("file name with spaces & 100%.bin"),
            partialFile: PartialFile.newURL(for: folder.appendingPathComponent("file name with spaces & 100%.bin")),
            bytesKept: 7,
            validator: nil,
            totalBytes: 7
        )
        for data in [full, bare, made] {
            let decoded = try JSONDecoder().decode(DownloadResumeData.self, from: JSONEncoder().encode(data))
            #expect(decoded == data)
            #expect(decoded.partialFile.path == data.partialFile.path)
            #expect(try Self.json(decoded) == Self.json(data), "written again, it is the same JSON")
        }
    }

    @Test func segmentedResumeDataEncodesAndDecodesToItself() throws {
        let full = try Self.segmented()
        let bare = try SegmentedDownloadResumeData(
            mirrors: [URL(string: "https://a.example.com/video.mp4")!],
            destination: Self.destination,
            partialFile: Self.partialFile,
            totalBytes: 0,
            validator: .entityTag("\"\""),
            keptRanges: []
        )
        for data in [full, bare] {
            let decoded = try JSONDecoder().decode(SegmentedDownloadResumeData.self, from: JSONEncoder().encode(data))
            #expect(decoded == data)
            #expect(decoded.partialFile.path == data.partialFile.path)
            #expect(try Self.json(decoded) == Self.json(data), "written again, it is the same JSON")
        }
    }

    @Test func fieldsThisVersionDoesNotKnowAreIgnored() throws {
        var single = try Self.object(Self.single())
        single["addedLater"] = ["anything": [1, 2, 3]]
        single["validator"] = ["kind": "entityTag", "value": "\"v1-abc\"", "addedLater": true]
        #expect(try Self.decode(DownloadResumeData.self, single) == Self.single())
        var segmented = try Self.object(Self.segmented())
        segmented["addedLater"] = "anything"
        #expect(try Self.decode(SegmentedDownloadResumeData.self, segmented) == Self.segmented())
    }

    @Test func aPropertyListRoundTripsToo() throws {
        let encoder = PropertyListEncoder()
        let single = try Self.single()
        let segmented = try Self.segmented()
        #expect(try PropertyListDecoder().decode(DownloadResumeData.self, from: encoder.encode(single)) == single)
        #expect(
            try PropertyListDecoder().decode(SegmentedDownloadResumeData.self, from: encoder.encode(segmented))
                == segmented
        )
    }

    // MARK: Version and kind

    @Test func aNewerVersionIsRefusedNamingVersion() throws {
        var object = try Self.object(Self.single())
        object["version"] = 2
        let error = refusal { try Self.decode(DownloadResumeData.self, object) }
        #expect(error?.path == ["version"])
        #expect(error?.description == "version 2 is newer than this library reads (1)")
        var segmented = try Self.object(Self.segmented())
        segmented["version"] = 2
        #expect(refusal { try Self.decode(SegmentedDownloadResumeData.self, segmented) }?.path == ["version"])
    }

    @Test(arguments: ["0", "-1", #""1""#, "1.5", "null", "[1]", "9223372036854775807", "1e30"])
    func aVersionThatIsNotOneIsRefusedNamingVersion(_ version: String) throws {
        let object = try Tampering("version", version, version).apply(to: Self.object(Self.single()))
        #expect(refusal { try Self.decode(DownloadResumeData.self, object) }?.path == ["version"])
    }

    @Test func resumeDataOfTheOtherKindIsRefusedNamingKind() throws {
        let single = try Self.object(Self.single())
        let segmented = try Self.object(Self.segmented())
        let asSegmented = refusal { try Self.decode(SegmentedDownloadResumeData.self, single) }
        #expect(asSegmented?.path == ["kind"])
        #expect(
            asSegmented?.description
                == "\"single\" resume data is read as DownloadResumeData, not SegmentedDownloadResumeData"
        )
        let asSingle = refusal { try Self.decode(DownloadResumeData.self, segmented) }
        #expect(asSingle?.path == ["kind"])
        for kind in ["multi", "", "Single", 1] as [Any] {
            var object = single
            object["kind"] = kind
            #expect(refusal { try Self.decode(DownloadResumeData.self, object) }?.path == ["kind"], "\(kind)")
        }
        var kindless = single
        kindless.removeValue(forKey: "kind")
        #expect(refusal { try Self.decode(DownloadResumeData.self, kindless) }?.path == ["kind"])
    }

    // MARK: Values no download writes

    /// A field of resume data and a value for it that no download writes, as JSON (`nil`: the field is left out).
    struct Tampering: Sendable, CustomTestStringConvertible {
        let field: String
        let json: String?
        let what: String
        var testDescription: String { "\(field): \(what)" }

        init(_ field: String, _ json: String?, _ what: String) {
            self.field = field
            self.json = json
            self.what = what
        }

        /// `object` with the field changed.
        func apply(to object: [String: Any]) throws -> [String: Any] {
            var object = object
            object[field] = try json.map {
                try JSONSerialization.jsonObject(with: Data($0.utf8), options: .fragmentsAllowed)
            }
            return object
        }
    }

    /// What both kinds refuse alike.
    static let common: [Tampering] = [
        Tampering("destination", #""video.mp4""#, "a relative path"),
        Tampering("destination", #""file:///var/mobile/Downloads/video.mp4""#, "a file: URL"),
        Tampering("destination", #""/var/mobile/../../etc/passwd""#, "a path with .."),
        Tampering("destination", #""/""#, "the root"),
        Tampering("destination", #""/var/mobile/Downloads/vid\u0000eo.mp4""#, "a NUL"),
        Tampering("destination", "7", "a number"),
        Tampering("destination", nil, "left out"),
        Tampering("partialFile", #""/etc/passwd""#, "an absolute path"),
        Tampering("partialFile", #""../.video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.partial""#, "a path with .."),
        Tampering("partialFile", #""..""#, ".."),
        Tampering("partialFile", #"".""#, "."),
        Tampering("partialFile", #""""#, "empty"),
        Tampering("partialFile", #""sub/.video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.partial""#, "a path with /"),
        Tampering("partialFile", #"".video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.partial\u0000""#, "a NUL"),
        Tampering(
            "partialFile",
            #""file:///var/mobile/Downloads/.video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.partial""#,
            "a file: URL, as before versions"
        ),
        Tampering("partialFile", #""video.mp4""#, "the destination itself"),
        Tampering("partialFile", #""victim.txt""#, "another file in the folder"),
        Tampering("partialFile", #"".video.mp4.not-a-uuid.partial""#, "a name the library does not give"),
        Tampering("partialFile", #"".video.mp4.e621e1f8-c36c-495a-93fc-0c247a3e6e5f.partial""#, "a lowercase UUID"),
        Tampering("partialFile", #"".other.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.partial""#, "another file's"),
        Tampering("partialFile", "1", "a number"),
        Tampering("partialFile", nil, "left out"),
        Tampering("validator", #"{"kind": "strongHash", "value": "\"v1\""}"#, "an unknown kind"),
        Tampering("validator", #"{"kind": "entityTag"}"#, "no value"),
        Tampering("validator", #"{"value": "\"v1\""}"#, "no kind"),
        Tampering("validator", #"{"kind": "entityTag", "value": 1}"#, "a number"),
        Tampering("validator", #"{"entityTag": {"_0": "\"v1\""}}"#, "the shape from before versions"),
        Tampering("validator", #""\"v1\"""#, "a string"),
        Tampering("validator", #"{"kind": "entityTag", "value": "\"v1\"\r\nX-Injected: 1"}"#, "CR LF and a header"),
        Tampering("validator", #"{"kind": "entityTag", "value": "\"v\u00001\""}"#, "a NUL"),
        Tampering("validator", #"{"kind": "entityTag", "value": "\"v\u007F1\""}"#, "a DEL"),
        Tampering("validator", #"{"kind": "entityTag", "value": "W/\"v1\""}"#, "a weak tag"),
        Tampering("validator", #"{"kind": "lastModified", "value": "yesterday"}"#, "not a date"),
        Tampering(
            "validator",
            #"{"kind": "lastModified", "value": "Sun, 06 Nov 1994 08:49:37 GMT\n"}"#,
            "a date and LF"
        ),
        Tampering("totalBytes", "-1", "negative"),
        Tampering("totalBytes", "-9223372036854775808", "Int64.min"),
        Tampering("totalBytes", "9223372036854775808", "past Int64"),
        Tampering("totalBytes", #""2000000""#, "a string"),
        Tampering("integrity", #"{"length": -1}"#, "a negative length"),
        Tampering("integrity", #"{"sha256": "not hex"}"#, "a digest that is not hexadecimal"),
        Tampering("integrity", #"{"length": 10, "pieces": {"length": 0, "sha256": []}}"#, "pieces of 0 bytes"),
        Tampering("integrity", #"{"length": 10, "pieces": {"length": -4, "sha256": []}}"#, "negative pieces"),
        Tampering("integrity", #"{"length": 10, "pieces": {"length": 4, "sha256": []}}"#, "too few pieces"),
    ]

    static let singleOnly: [Tampering] = [
        Tampering("url", #""ftp://example.com/video.mp4""#, "not HTTP"),
        Tampering("url", #""file:///etc/passwd""#, "a file: URL"),
        Tampering("url", #""""#, "empty"),
        Tampering("url", #"{"relative": "https://example.com/video.mp4"}"#, "an object"),
        Tampering("url", nil, "left out"),
        Tampering("bytesKept", "-1", "negative"),
        Tampering("bytesKept", "-9223372036854775808", "Int64.min"),
        Tampering("bytesKept", "2000001", "more than the file"),
        Tampering("bytesKept", "1.5", "a fraction"),
        Tampering("bytesKept", nil, "left out"),
    ]

    /// A JSON list of `count` times `element`.
    static func jsonList(of element: String, count: Int) -> String {
        "[" + Array(repeating: element, count: count).joined(separator: ",") + "]"
    }

    static let segmentedOnly: [Tampering] = [
        Tampering("mirrors", "[]", "none"),
        Tampering("mirrors", #"["file:///etc/passwd"]"#, "a file: URL"),
        Tampering("mirrors", #"["https://a.example.com/video.mp4", "gopher://b.example.com/v"]"#, "not HTTP"),
        Tampering("mirrors", #"[""]"#, "an empty string"),
        Tampering("mirrors", "[1]", "a number"),
        Tampering("mirrors", #""https://a.example.com/video.mp4""#, "a string, not a list"),
        Tampering(
            "mirrors",
            jsonList(of: #""https://a.example.com/v""#, count: SegmentedDownloadResumeData.maximumMirrors + 1),
            "one more than maximumMirrors"
        ),
        Tampering("mirrors", jsonList(of: #""https://a.example.com/v""#, count: 1_000_000), "a million"),
        Tampering("mirrors", nil, "left out"),
        Tampering("keptRanges", "[[0]]", "a range of one number"),
        Tampering("keptRanges", "[[0, 1, 2]]", "a range of three numbers"),
        Tampering("keptRanges", "[[100, 0]]", "a range that ends before it starts"),
        Tampering("keptRanges", "[[-5, 10]]", "a negative start"),
        Tampering("keptRanges", "[[-9223372036854775808, 10]]", "Int64.min"),
        Tampering("keptRanges", "[[0, 1e30]]", "a number past Int64"),
        Tampering("keptRanges", #"[["0", 10]]"#, "a string"),
        Tampering("keptRanges", #"["0-100"]"#, "a Range header"),
        Tampering("keptRanges", #"[{"lowerBound": 0, "upperBound": 10}]"#, "an object"),
        Tampering("keptRanges", "[[0, 100], [50, 150]]", "overlapping"),
        Tampering("keptRanges", "[[200, 300], [0, 100]]", "out of order"),
        Tampering("keptRanges", "[[0, 100], [100, 200]]", "touching"),
        Tampering("keptRanges", "[[10, 10]]", "empty"),
        Tampering("keptRanges", "[[1999000, 2000001]]", "past the file's end"),
        Tampering("keptRanges", "null", "null"),
        Tampering("keptRanges", nil, "left out"),
        Tampering("totalBytes", "1999999", "not the integrity's length"),
    ]

    @Test(arguments: common + singleOnly)
    func singleURLResumeDataNoDownloadWritesIsRefusedNamingTheField(_ tampering: Tampering) throws {
        let object = try tampering.apply(to: Self.object(Self.single()))
        let error = refusal { try Self.decode(DownloadResumeData.self, object) }
        #expect(error?.path.first == tampering.field, "\(error as Any)")
    }

    @Test(arguments: common + segmentedOnly)
    func segmentedResumeDataNoDownloadWritesIsRefusedNamingTheField(_ tampering: Tampering) throws {
        let object = try tampering.apply(to: Self.object(Self.segmented()))
        let error = refusal { try Self.decode(SegmentedDownloadResumeData.self, object) }
        #expect(error?.path.first == tampering.field, "\(error as Any)")
    }

    @Test func whatIsRefusedSaysWhy() throws {
        var object = try Self.object(Self.segmented())
        object["keptRanges"] = [[0, 100], [300, 200]]
        #expect(
            refusal { try Self.decode(SegmentedDownloadResumeData.self, object) }
                == Refusal(path: ["keptRanges"], description: "range 1, [300, 200], ends before it starts")
        )
        object = try Self.object(Self.segmented())
        object["mirrors"] = Array(repeating: "https://a.example.com/v", count: 300)
        #expect(
            refusal { try Self.decode(SegmentedDownloadResumeData.self, object) }
                == Refusal(path: ["mirrors"], description: "300 URLs are more than 256")
        )
        object = try Self.object(Self.segmented())
        object["partialFile"] = "../.video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.partial"
        #expect(
            refusal { try Self.decode(SegmentedDownloadResumeData.self, object) }
                == Refusal(
                    path: ["partialFile"],
                    description: #""../.video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.partial" is not the name of "#
                        + "a file in the destination's folder"
                )
        )
        object = try Self.object(Self.segmented())
        object["validator"] = ["kind": "etag", "value": "\"v1\""]
        #expect(
            refusal { try Self.decode(SegmentedDownloadResumeData.self, object) }
                == Refusal(path: ["validator"], description: #"kind "etag" is neither entityTag nor lastModified"#)
        )
    }

    // MARK: Helpers

    /// How decoding refused: the coding path of the value it refused, and why.
    struct Refusal: Equatable, CustomStringConvertible {
        let path: [String]
        let description: String
    }

    /// How `decode` refused, or `nil` (and an issue) if it decoded or threw something else than a `DecodingError`.
    func refusal(_ decode: () throws -> Any, sourceLocation: SourceLocation = #_sourceLocation) -> Refusal? {
        do {
            let decoded = try decode()
            Issue.record("decoded: \(decoded)", sourceLocation: sourceLocation)
        } catch DecodingError.dataCorrupted(let context), DecodingError.typeMismatch(_, let context),
            DecodingError.valueNotFound(_, let context)
        {
            return Refusal(path: context.codingPath.map(\.stringValue), description: context.debugDescription)
        } catch DecodingError.keyNotFound(let key, let context) {
            return Refusal(path: (context.codingPath + [key]).map(\.stringValue), description: context.debugDescription)
        } catch {
            Issue.record("threw \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }
}
