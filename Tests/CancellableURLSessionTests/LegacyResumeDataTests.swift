import Foundation
import Testing

@testable import CancellableURLSession

/// Resume data saved before the format had a version — what 0eb7b5f wrote, with Swift's synthesized coding — is still
/// read, as it was then: apps keep it across launches and updates.
@Suite struct LegacyResumeDataTests {
    // MARK: JSON written by 0eb7b5f

    // `JSONEncoder` with `.sortedKeys`, for the values below.

    static let single = #"""
        {"bytesKept":1500000,"destination":"file:\/\/\/var\/mobile\/Downloads\/video.mp4",\#
        "integrity":{"length":2000000,"pieces":{"length":1048576,\#
        "sha256":["abababababababababababababababababababababababababababababababab",\#
        "CDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCD"]},\#
        "sha256":"0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f"},\#
        "partialFile":"file:\/\/\/var\/mobile\/Downloads\/.video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.pa\#
        rtial","totalBytes":2000000,"url":"https:\/\/example.com\/files\/video.mp4?token=a%20b",\#
        "validator":{"entityTag":{"_0":"\"v1-abc\""}}}
        """#

    static let segmented = #"""
        {"destination":"file:\/\/\/var\/mobile\/Downloads\/video.mp4","integrity":{"length":2000000,\#
        "pieces":{"length":1048576,\#
        "sha256":["abababababababababababababababababababababababababababababababab",\#
        "CDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCD"]},\#
        "sha256":"0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f"},"keptRanges":[[0,\#
        524288],[1048576,1310720],[1900000,2000000]],"mirrors":["https:\/\/a.example.com\/video.mp4",\#
        "http:\/\/b.example.org:8080\/v.mp4"],\#
        "partialFile":"file:\/\/\/var\/mobile\/Downloads\/.video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.pa\#
        rtial","totalBytes":2000000,"validator":{"lastModified":{"_0":"Sun, 06 Nov 1994 08:49:37 GMT"}}}
        """#

    static let singleMinimal = #"""
        {"bytesKept":0,"destination":"file:\/\/\/var\/mobile\/Downloads\/video.mp4",\#
        "partialFile":"file:\/\/\/var\/mobile\/Downloads\/.video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.pa\#
        rtial","url":"https:\/\/example.com\/video.mp4"}
        """#

    static let segmentedMinimal = #"""
        {"destination":"file:\/\/\/var\/mobile\/Downloads\/video.mp4","keptRanges":[],\#
        "mirrors":["https:\/\/a.example.com\/video.mp4"],\#
        "partialFile":"file:\/\/\/var\/mobile\/Downloads\/.video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.pa\#
        rtial"}
        """#

    static let destination = URL(fileURLWithPath: "/var/mobile/Downloads/video.mp4")
    static let partialFile = URL(
        fileURLWithPath: "/var/mobile/Downloads/.video.mp4.E621E1F8-C36C-495A-93FC-0C247A3E6E5F.partial"
    )
    static let integrity = DownloadIntegrity(
        length: 2_000_000,
        sha256: String(repeating: "0f", count: 32),
        pieces: PieceDigests(
            length: 1_048_576,
            sha256: [String(repeating: "ab", count: 32), String(repeating: "CD", count: 32)]
        )
    )

    @Test func singleURLResumeDataDecodesAsItWasWritten() throws {
        let expected = try DownloadResumeData(
            url: URL(string: "https://example.com/files/video.mp4?token=a%20b")!,
            destination: Self.destination,
            partialFile: Self.partialFile,
            bytesKept: 1_500_000,
            validator: .entityTag("\"v1-abc\""),
            totalBytes: 2_000_000,
            integrity: Self.integrity
        )
        let decoded = try JSONDecoder().decode(DownloadResumeData.self, from: Data(Self.single.utf8))
        #expect(decoded == expected)
        #expect(decoded.partialFile.path == Self.partialFile.path)
        #expect(decoded.integrity?.pieces?.sha256.count == 2)
    }

    @Test func singleURLResumeDataWithOnlyTheRequiredFieldsDecodes() throws {
        let expected = try DownloadResumeData(
            url: URL(string: "https://example.com/video.mp4")!,
            destination: Self.destination,
            partialFile: Self.partialFile,
            bytesKept: 0,
            validator: nil,
            totalBytes: nil
        )
        #expect(try JSONDecoder().decode(DownloadResumeData.self, from: Data(Self.singleMinimal.utf8)) == expected)
    }

    @Test func segmentedResumeDataDecodesAsItWasWritten() throws {
        let expected = try SegmentedDownloadResumeData(
            mirrors: [
                URL(string: "https://a.example.com/video.mp4")!,
                URL(string: "http://b.example.org:8080/v.mp4")!,
            ],
            destination: Self.destination,
            partialFile: Self.partialFile,
            totalBytes: 2_000_000,
            validator: .lastModified("Sun, 06 Nov 1994 08:49:37 GMT"),
            keptRanges: [0..<524_288, 1_048_576..<1_310_720, 1_900_000..<2_000_000],
            integrity: Self.integrity
        )
        let decoded = try JSONDecoder().decode(SegmentedDownloadResumeData.self, from: Data(Self.segmented.utf8))
        #expect(decoded == expected)
        #expect(decoded.bytesKept == 524_288 + 262_144 + 100_000)
    }

    @Test func resumeDataReadInTheOldFormatIsWrittenInTheCurrentOne() throws {
        let single = try JSONDecoder().decode(DownloadResumeData.self, from: Data(Self.single.utf8))
        let singleObject = try JSONSerialization.jsonObject(with: JSONEncoder().encode(single)) as? [String: Any]
        #expect(singleObject?["version"] as? Int == 1)
        #expect(singleObject?["partialFile"] as? String == Self.partialFile.lastPathComponent)
        #expect(try JSONDecoder().decode(DownloadResumeData.self, from: JSONEncoder().encode(single)) == single)
        let segmented = try JSONDecoder().decode(SegmentedDownloadResumeData.self, from: Data(Self.segmented.utf8))
        let segmentedObject = try JSONSerialization.jsonObject(with: JSONEncoder().encode(segmented)) as? [String: Any]
        #expect(segmentedObject?["version"] as? Int == 1)
        #expect(
            try JSONDecoder().decode(SegmentedDownloadResumeData.self, from: JSONEncoder().encode(segmented))
                == segmented
        )
    }

    @Test func segmentedResumeDataWithOnlyTheRequiredFieldsDecodes() throws {
        let expected = try SegmentedDownloadResumeData(
            mirrors: [URL(string: "https://a.example.com/video.mp4")!],
            destination: Self.destination,
            partialFile: Self.partialFile,
            totalBytes: nil,
            validator: nil,
            keptRanges: []
        )
        let json = Data(Self.segmentedMinimal.utf8)
        #expect(try JSONDecoder().decode(SegmentedDownloadResumeData.self, from: json) == expected)
    }
}
