import Foundation

/// Where resume data, of either kind, says a download's bytes are: the destination it goes to and the hidden partial
/// file next to it (``PartialFile``). Read back, both are untrusted input: ``problem`` names the one no download could
/// have produced, and ``discard()`` removes nothing but the library's own partial file next to the destination.
struct PartialFileReference: Sendable, Hashable {
    /// Where the download goes once it finishes.
    let destination: URL
    /// The hidden file next to the destination that holds the bytes so far.
    let partialFile: URL

    /// The fields of resume data that hold a reference, named as resume data names them.
    enum Field: String, Sendable {
        case destination, partialFile
    }

    /// A value of a reference that no download could have produced: which field, and why.
    struct Problem: Error, Sendable {
        let field: Field
        let reason: String
    }

    /// Stores the two, unchecked: the resume data that holds them checks ``problem``.
    init(destination: URL, partialFile: URL) {
        self.destination = destination
        self.partialFile = partialFile
    }

    /// Reads the two back as the resume data format stores them (``destinationPath``, ``partialFileName``), unchecked
    /// but for their shape: ``problem`` checks the rest.
    ///
    /// - Throws: ``Problem`` if the path is not absolute (a relative one would be resolved against the working
    ///   directory) or holds NUL, or if the name is not one file name: empty, `.`, `..`, or with a `/` or NUL.
    init(destinationPath: String, partialFileName name: String) throws(Problem) {
        guard destinationPath.hasPrefix("/"), !destinationPath.utf8.contains(0) else {
            throw Problem(field: .destination, reason: "\(destinationPath.debugDescription) is not an absolute path")
        }
        guard !name.isEmpty, name != ".", name != "..",
            !name.utf8.contains(where: { $0 == 0 || $0 == UInt8(ascii: "/") })
        else {
            throw Problem(
                field: .partialFile,
                reason: "\(name.debugDescription) is not the name of a file in the destination's folder"
            )
        }
        let destination = URL(fileURLWithPath: destinationPath, isDirectory: false)
        self.init(
            destination: destination,
            partialFile: destination.deletingLastPathComponent().appendingPathComponent(name)
        )
    }

    /// The destination's absolute path: what the resume data format stores.
    var destinationPath: String { destination.path }

    /// The partial file's name, in the destination's folder: what the resume data format stores.
    var partialFileName: String { partialFile.lastPathComponent }

    /// The first of the two that no download could have produced; `nil` if neither: the destination must be an
    /// absolute file path without `..`, the partial file the hidden `.<name>.<UUID>.partial` file next to it that the
    /// library names.
    var problem: Problem? {
        if !PartialFile.isPlainFilePath(destination) {
            return Problem(
                field: .destination,
                reason: "\(destination.absoluteString) is not an absolute file path without .."
            )
        }
        if !PartialFile.isOwned(partialFile, by: destination) {
            return Problem(
                field: .partialFile,
                reason:
                    "\(partialFile.absoluteString) is not the hidden .\(destination.lastPathComponent).<UUID>.partial "
                    + "file next to the destination"
            )
        }
        return nil
    }

    /// The same partial file for another destination: the file of the same id (`.<name>.<UUID>.partial`, the same
    /// UUID) next to `destination`.
    ///
    /// - Throws: ``DownloadError/invalidResumeData(field:reason:)`` with field `partialFile` if this partial file
    ///   is not one the library names, or `destination` if `destination` is not an absolute file path without `..`.
    func relocated(to destination: URL) throws -> PartialFileReference {
        guard let id = PartialFile.id(of: partialFile, for: self.destination) else {
            throw DownloadError.invalidResumeData(
                field: Field.partialFile.rawValue,
                reason: "\(partialFile.absoluteString) is not a partial file the library names"
            )
        }
        let relocated = PartialFileReference(
            destination: destination,
            partialFile: PartialFile.url(for: destination, id: id)
        )
        if let problem = relocated.problem {
            throw DownloadError.invalidResumeData(field: problem.field.rawValue, reason: problem.reason)
        }
        return relocated
    }

    /// Removes the partial file, if it is one the library names for the destination and no download in this process
    /// writes it (``PartialFile/removeUnlessInUse()``): `unlink(2)`, never a directory, a symbolic link rather than
    /// what it points to.
    func discard() {
        guard PartialFile.isOwned(partialFile, by: destination) else { return }
        PartialFile(url: partialFile, destination: destination).removeUnlessInUse()
    }
}
