using Akka.Configuration;
using Courier.Storage;

namespace Courier.Actors.Persistence;

/// <summary>The keys the journal and snapshot-store plugins read from their config section (reference.conf).</summary>
internal static class PluginSettings
{
    /// <summary>The <c>dir</c> key: the engine's directory, or null to keep it in memory.</summary>
    public static string? Directory(Config config) =>
        config.GetString("dir", "") is { Length: > 0 } dir ? dir : null;

    /// <summary>The <c>sync</c> key: <c>always</c> or a duration (sync_interval).</summary>
    public static SyncPolicy Sync(Config config)
    {
        var text = config.GetString("sync", "always");
        return string.Equals(text, "always", StringComparison.OrdinalIgnoreCase)
            ? SyncPolicy.Always
            : SyncPolicy.Interval(config.GetTimeSpan("sync", TimeSpan.Zero));
    }
}
