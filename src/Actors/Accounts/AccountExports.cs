using Courier.Actors.Server;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Accounts;

/// <summary>Whether an account may import a subject another exports (nats-server's checkStreamImportAuthorized and checkServiceImportAuthorized).</summary>
internal static class AccountExports
{
    /// <summary>
    /// The export of <paramref name="exporter"/> that lets <paramref name="importer"/> import
    /// <paramref name="subject"/> as a stream or service, or null when none does. An export with the
    /// same subject decides first; else the first export whose subject covers the import's.
    /// </summary>
    public static ExportOptions? FindExport(AccountOptions exporter, string importer, string subject, bool service)
    {
        if (!SubjectRules.IsValidSubject(subject))
        {
            return null;
        }

        foreach (var export in exporter.Exports)
        {
            if (export.IsService == service && export.Subject == subject)
            {
                return Approves(export, importer) ? export : null;
            }
        }

        foreach (var export in exporter.Exports)
        {
            if (export.IsService == service && SubjectRules.IsSubsetOf(subject, export.Subject))
            {
                return Approves(export, importer) ? export : null;
            }
        }

        return null;
    }

    // A public export (no account list) approves everyone; a private one the accounts it lists.
    private static bool Approves(ExportOptions export, string importer) =>
        export.Accounts is not { Count: > 0 } accounts || accounts.Contains(importer);
}
