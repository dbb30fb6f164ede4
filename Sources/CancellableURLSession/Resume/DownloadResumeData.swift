import Cancellable
public import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What continues a paused download: where its bytes are, how many, and how the server identified the file.
///
/// ```swift
/// let saved = try JSONEncoder().encode(resumeData)                 // survives a relaunch
/// let resumeData = try JSONDecoder().decode(DownloadResumeData.self, from: saved)
/// session.resumeDownload(resumeData)
/// ```
///
/// It is `Codable`, so an app can keep it across launches; the partial file it names stays next to the
/// destination until the download is resumed or ``discard()`` is called. It is written in a documented, versioned
/// JSON format that later versions of the library read (<doc:ResumeDataFormat>, kind `single`). Decoding checks every
/// field: resume data read back is untrusted input (``init(from:)`` says what it refuses). Keep it where only your app
/// can write it.
public struct DownloadResumeData: Sendable, Hashable, Codable {
    /// The URL the bytes came from.
    public let url: URL
    /// Where the download goes once it finishes.
    public var destination: URL { file.destination }
    /// The hidden file next to the destination that holds the bytes so far.
    public var partialFile: URL { file.partialFile }
    /// How many bytes of the file the partial file holds: its first `bytesKept` bytes are the file's.
    public let bytesKept: Int64
    /// How the server identified the file — a strong validator — if it did: what `If-Range` sends, so that a file
    /// that changed is not continued. Without one, a resume starts over unless you opt in
    /// (``WithoutValidator/continueIfLengthMatches``).
    public let validator: Validator?
    /// The whole file's length, if the server said.
    public let totalBytes: Int64?
    /// What the finished file is checked against, if the download was given it.
    public let integrity: DownloadIntegrity?
    /// The destination and the partial file.
    private let file: PartialFileReference

    /// A strong validator from the server's response: what makes a range request safe (RFC 9110 §8.8).
    public enum Validator: Sendable, Hashable, Codable {
        /// A strong `ETag`, quotes included (a weak one, `W/"…"`, cannot be used with `If-Range`).
        case entityTag(String)
        /// The `Last-Modified` date, as the server sent it; taken only from a response without a strong `ETag` whose
        /// `Date` is at least 60 seconds later, which makes the date strong (RFC 9110 §8.8.2.2).
        case lastModified(String)

        /// The `If-Range` header's value.
        public var headerValue: String {
            switch self {
            case .entityTag(let tag): tag
            case .lastModified(let date): date
            }
        }

        /// Whether the value may be sent in `If-Range`: a strong entity-tag — `"`, then visible ASCII but `"` (or
        /// obsolete 0x80–0xFF), then `"` (RFC 9110 §8.8.3) — or an HTTP-date in one of its three formats (§5.6.7).
        /// Neither admits CR, LF, NUL or any other control character.
        var isWellFormed: Bool {
            switch self {
            case .entityTag(let tag):
                let scalars = Array(tag.unicodeScalars)
                return scalars.count >= 2 && scalars.first == "\"" && scalars.last == "\""
                    && scalars.dropFirst().dropLast().allSatisfy {
                        $0.value == 0x21 || (0x23...0x7E).contains($0.value) || (0x80...0xFF).contains($0.value)
                    }
            case .lastModified(let date):
                return HTTPDate.parse(date) != nil
            }
        }
    }

    /// Makes resume data; the library makes it for you when a ``ResumableDownload`` pauses.
    ///
    /// - Throws: ``DownloadError/invalidResumeData(field:reason:)`` naming the first value that no download
    ///   could have produced — the same rules as decoding (see ``init(from:)``).
    public init(
        url: URL,
        destination: URL,
        partialFile: URL,
        bytesKept: Int64,
        validator: Validator?,
        totalBytes: Int64?,
        integrity: DownloadIntegrity? = nil
    ) throws {
        self.init(
            storing: url,
            file: PartialFileReference(destination: destination, partialFile: partialFile),
            bytesKept: bytesKept,
            validator: validator,
            totalBytes: totalBytes,
            integrity: integrity
        )
        if let (field, reason) = firstInvalidField {
            throw DownloadError.invalidResumeData(field: field.stringValue, reason: reason)
        }
    }

    /// Stores the values, unchecked: the initializers above check them.
    private init(
        storing url: URL,
        file: PartialFileReference,
        bytesKept: Int64,
        validator: Validator?,
        totalBytes: Int64?,
        integrity: DownloadIntegrity?
    ) {
        self.url = url
        self.file = file
        self.bytesKept = bytesKept
        self.validator = validator
        self.totalBytes = totalBytes
        self.integrity = integrity
    }

    /// Decodes resume data in a version of <doc:ResumeDataFormat> this library reads — version 1, or the format from
    /// before versions — and refuses what no download could have produced: resume data read back from disk or
    /// received from elsewhere is untrusted input.
    ///
    /// ```swift
    /// let saved = try? JSONDecoder().decode(DownloadResumeData.self, from: Data(contentsOf: stateFile))
    /// if saved == nil { try DownloadResumeData.discardPartialFiles(for: file) }   // unreadable: start over
    /// ```
    ///
    /// - Throws: `DecodingError.dataCorrupted`, whose coding path names the field, if `version` is newer than this
    ///   library reads or is not a positive integer; `kind` is not `single`; `url` is not an `http` or `https` URL;
    ///   `destination` is not an absolute file path without `..`; `partialFile` is not the hidden
    ///   `.<name>.<UUID>.partial` file next to the destination that the library names (in version 1, its name: one
    ///   without `/`, `..` or NUL); `bytesKept` or `totalBytes` is negative, or `bytesKept` is more than `totalBytes`;
    ///   `validator` is not a strong entity-tag or an HTTP-date (no CR, LF, NUL or other control character can reach
    ///   a request header); or `integrity` cannot be checked (a negative length, a digest that is not 64 ASCII
    ///   hexadecimal digits). A field of the wrong type, or missing, throws the `DecodingError` that says so.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if try container.decodeVersion(of: .single) {
            self.init(
                storing: try container.decodeURLString(forKey: .url),
                file: try container.decodePartialFileReference(),
                bytesKept: try container.decodeInteger(Int64.self, forKey: .bytesKept),
                validator: try container.decodeValidator(),
                totalBytes: try container.decodeIntegerIfPresent(Int64.self, forKey: .totalBytes),
                integrity: try container.decodeIntegrityIfPresent(forKey: .integrity)
            )
        } else {
            // The format from before versions: file URLs, and the validator as Swift synthesized its coding.
            self.init(
                storing: try container.decode(URL.self, forKey: .url),
                file: PartialFileReference(
                    destination: try container.decode(URL.self, forKey: .destination),
                    partialFile: try container.decode(URL.self, forKey: .partialFile)
                ),
                bytesKept: try container.decode(Int64.self, forKey: .bytesKept),
                validator: try container.decodeIfPresent(Validator.self, forKey: .validator),
                totalBytes: try container.decodeIfPresent(Int64.self, forKey: .totalBytes),
                integrity: try container.decodeIfPresent(DownloadIntegrity.self, forKey: .integrity)
            )
        }
        if let (field, reason) = firstInvalidField {
            throw DecodingError.dataCorruptedError(forKey: field, in: container, debugDescription: reason)
        }
    }

    /// Encodes the resume data in the current version of <doc:ResumeDataFormat>, kind `single`.
    ///
    /// ```swift
    /// try JSONEncoder().encode(resumeData).write(to: stateFile, options: .atomic)
    /// ```
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeVersion(of: .single)
        try container.encode(url.absoluteString, forKey: .url)
        try container.encodePartialFileReference(file)
        try container.encode(bytesKept, forKey: .bytesKept)
        try container.encodeIfPresent(totalBytes, forKey: .totalBytes)
        try container.encodeValidator(validator)
        try container.encodeIfPresent(integrity, forKey: .integrity)
    }

    private enum CodingKeys: String, ResumeDataCodingKey {
        case version, kind, url, destination, partialFile, bytesKept, validator, totalBytes, integrity
    }

    /// The first value no download could have produced, and why; `nil` if every value could be.
    private var firstInvalidField: (CodingKeys, String)? {
        if !url.isHTTPWithHost {
            return (.url, "\(url.absoluteString) is not an http or https URL")
        }
        if let problem = file.problem { return (.key(problem.field), problem.reason) }
        if bytesKept < 0 { return (.bytesKept, "\(bytesKept) is negative") }
        if let totalBytes, totalBytes < 0 { return (.totalBytes, "\(totalBytes) is negative") }
        if let totalBytes, bytesKept > totalBytes {
            return (.bytesKept, "\(bytesKept) is more than the file's \(totalBytes) bytes")
        }
        if let validator, !validator.isWellFormed {
            return (.validator, "\(validator) is neither a strong entity-tag nor an HTTP-date")
        }
        if let problem = integrity?.problem { return (.integrity, problem) }
        return nil
    }

    /// The same resume data for another destination: the partial file is looked for next to `destination`, under the
    /// name the library gives it there (`.<name>.<UUID>.partial`, the same UUID).
    ///
    /// ```swift
    /// // The app's container has moved since the pause (iOS moves it when the app is updated):
    /// let documents = FileManager.default.urls(for: .documentDirectory, in: .userDomainMask)[0]
    /// let destination = documents.appendingPathComponent("video.mp4")
    /// session.resumeDownload(saved, to: destination)          // the same as resumeDownload(saved.relocated(to:))
    /// try saved.relocated(to: destination).discard()          // or give the bytes up
    /// ```
    ///
    /// Resume data names the destination it was made for as an absolute path, which goes stale when the folder
    /// moves — an iOS app's container moves when the app is updated — and which another program could have
    /// changed. An app that knows where its download goes says so here (or in
    /// `URLSession.resumeDownload(_:to:from:verifying:withoutValidator:retrying:file:line:progress:)`), and nothing
    /// outside that destination's folder is touched, whatever the data says. If the folder holds no partial file of
    /// that name, the download starts over.
    ///
    /// - Throws: ``DownloadError/invalidResumeData(field:reason:)`` with field `destination` if `destination`
    ///   is not an absolute file path without `..`.
    public func relocated(to destination: URL) throws -> DownloadResumeData {
        let file = try file.relocated(to: destination)
        return try DownloadResumeData(
            url: url,
            destination: file.destination,
            partialFile: file.partialFile,
            bytesKept: bytesKept,
            validator: validator,
            totalBytes: totalBytes,
            integrity: integrity
        )
    }

    /// Removes the partial file: for a paused download you will not resume.
    ///
    /// ```swift
    /// saved?.discard()
    /// ```
    ///
    /// It removes only the hidden `.<name>.<UUID>.partial` file next to the destination that the library names, and
    /// never a directory: a symbolic link at that path is removed, not what it points to. While a download in this
    /// process writes the file — a resume of this data still running — it is left to that download, which moves it
    /// into place, keeps it for its own resume data, or removes it.
    public func discard() {
        file.discard()
    }

    /// Removes the partial files that downloads to `destination` left behind with no resume data to resume or discard
    /// them by: an app killed or crashed mid-download, or resume data that was never saved.
    ///
    /// ```swift
    /// // At launch: keep the partial file of the download you saved, remove every other one.
    /// let saved = try? JSONDecoder().decode(DownloadResumeData.self, from: Data(contentsOf: stateFile))
    /// try DownloadResumeData.discardPartialFiles(for: file, except: saved.map { [$0.partialFile] } ?? [])
    /// ```
    ///
    /// A download writes a hidden partial file next to its destination until it succeeds, and removes it when it
    /// fails or is cancelled for good; one that pauses leaves it for its resume data. A process that ends while a
    /// download runs leaves it with nothing that names it — before it took a
    /// ``SegmentedDownload/checkpoint()``, say, or before any pause — and it stays, as large as what was downloaded,
    /// until this removes it.
    ///
    /// It removes only files in the destination's folder named as the library names the partial files of `destination`
    /// (`.<name>.<UUID>.partial`), whatever kind of download made them (single-URL, resumable or segmented); never a
    /// directory, and a symbolic link rather than what it points to. It skips the files in `kept` (pass the
    /// `partialFile` of the resume data you will resume, of either kind) and the file of every download running in this
    /// process, whichever spelling of the folder (`/var` or `/private/var`, a symbolic link to it) either used; a
    /// resume of a file started while it is removed is refused with ``DownloadError/partialFileInUse(_:)``.
    /// Downloads in other processes are not known: do not call it while another process, such as an app extension
    /// sharing the folder, downloads to `destination`.
    ///
    /// - Parameters:
    ///   - destination: the file the downloads were to write.
    ///   - kept: partial files to keep.
    /// - Returns: the files removed, in name order.
    /// - Throws: `CocoaError(.fileWriteInvalidFileName)` if `destination` is not an absolute file path naming a file,
    ///   without `..`; the file system's error if the folder exists and cannot be listed. A folder that does not
    ///   exist holds nothing to remove.
    @discardableResult
    public static func discardPartialFiles(for destination: URL, except kept: [URL] = []) throws -> [URL] {
        try PartialFile.removeAbandoned(for: destination, except: kept)
    }

    /// What a resume does with bytes that no strong validator identifies (the server sent neither a strong `ETag`
    /// nor a `Last-Modified` that is strong).
    ///
    /// ```swift
    /// let expected = DownloadIntegrity(sha256: publishedDigest)   // catches a file that changed but kept its size
    /// session.resumeDownload(saved, verifying: expected, withoutValidator: .continueIfLengthMatches)
    /// ```
    ///
    /// HTTP allows combining two responses only if they share a strong validator (RFC 9110 §15.3.7.3): a file that
    /// changed while the download was paused but kept its length would otherwise finish as the old bytes followed by
    /// the new ones — a file that never existed on any server.
    public enum WithoutValidator: Sendable, Hashable {
        /// Start over from byte 0: the safe default.
        case startOver
        /// Continue the bytes kept if the server's `206` names the same total length. Only a
        /// ``DownloadIntegrity`` with a SHA-256 detects a file that changed but kept its length.
        case continueIfLengthMatches
    }
}
