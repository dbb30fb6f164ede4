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

    /// Stores the two, unchecked: the resume data that holds them checks ``problem``.
    init(destination: URL, partialFile: URL) {
        self.destination = destination
        self.partialFile = partialFile
    }

    /// The first of the two that no download could have produced, and why; `nil` if neither: the destination must be
    /// an absolute file path without `..`, the partial file the hidden `.<name>.<UUID>.partial` file next to it that
    /// the library names.
    var problem: (field: Field, reason: String)? {
        if !PartialFile.isPlainFilePath(destination) {
            return (.destination, "\(destination.absoluteString) is not an absolute file path without ..")
        }
        if !PartialFile.isOwned(partialFile, by: destination) {
            return (
                .partialFile,
                "\(partialFile.absoluteString) is not the hidden .\(destination.lastPathComponent).<UUID>.partial file "
                    + "next to the destination"
            )
        }
        return nil
    }

    /// The same partial file for another destination: the file of the same id (`.<name>.<UUID>.partial`, the same
    /// UUID) next to `destination`.
    ///
    /// - Throws: ``DownloadResumeError/invalidResumeData(field:reason:)`` with field `partialFile` if this partial file
    ///   is not one the library names, or `destination` if `destination` is not an absolute file path without `..`.
    func relocated(to destination: URL) throws -> PartialFileReference {
        guard let id = PartialFile.id(of: partialFile, for: self.destination) else {
            throw DownloadResumeError.invalidResumeData(
                field: Field.partialFile.rawValue,
                reason: "\(partialFile.absoluteString) is not a partial file the library names"
            )
        }
        let relocated = PartialFileReference(
            destination: destination,
            partialFile: PartialFile.url(for: destination, id: id)
        )
        if let (field, reason) = relocated.problem {
            throw DownloadResumeError.invalidResumeData(field: field.rawValue, reason: reason)
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
