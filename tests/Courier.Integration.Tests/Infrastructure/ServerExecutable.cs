namespace Courier.Integration.Tests.Infrastructure;

/// <summary>The program and leading arguments that start a server of a given kind.</summary>
/// <param name="FileName">The program to run.</param>
/// <param name="LeadingArguments">Arguments before the nats-server-style flags (e.g. the courier dll).</param>
public sealed record ServerExecutable(string FileName, IReadOnlyList<string> LeadingArguments)
{
    // Debian installs nats-server to /usr/sbin, which is not on every user's PATH.
    private static readonly string[] ExtraSearchDirectories = ["/usr/sbin", "/usr/local/sbin", "/usr/local/bin"];

    /// <summary>Finds the executable for <paramref name="kind"/> or throws with what to do about it.</summary>
    public static ServerExecutable For(ServerKind kind) => kind switch
    {
        ServerKind.NatsServer => NatsServer(),
        ServerKind.Courier => Courier(),
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, null),
    };

    private static ServerExecutable NatsServer()
    {
        var path = (Environment.GetEnvironmentVariable("PATH") ?? string.Empty)
            .Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
            .Concat(ExtraSearchDirectories)
            .Select(dir => Path.Combine(dir, "nats-server"))
            .FirstOrDefault(File.Exists);
        return path is null
            ? throw new InvalidOperationException(
                "nats-server not found on PATH (nor in /usr/sbin): install Debian's nats-server: apt-get install nats-server")
            : new ServerExecutable(path, []);
    }

    private static ServerExecutable Courier()
    {
        var dll = RepositoryLayout.CourierDll;
        if (!File.Exists(dll))
        {
            throw new InvalidOperationException(
                $"courier not built: {dll} does not exist. Build it with: dotnet build src/Gateway -c {RepositoryLayout.Configuration}");
        }

        // `dotnet test` tells child processes which host it runs on; fall back to PATH.
        var dotnet = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH");
        return new ServerExecutable(string.IsNullOrEmpty(dotnet) ? "dotnet" : dotnet, [dll]);
    }
}
