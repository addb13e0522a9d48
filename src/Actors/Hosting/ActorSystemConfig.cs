using System.Globalization;
using Akka.Actor;
using Akka.Actor.Setup;
using Akka.Configuration;
using Courier.Actors.Server;
using Courier.Storage;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Hosting;

/// <summary>
/// Builds the node's Akka.NET configuration, in one place: the embedded <c>reference.conf</c>, with
/// the values that come from <see cref="ServerOptions"/> put over it, and Akka's own defaults under it.
/// </summary>
public static class ActorSystemConfig
{
    /// <summary>The actor system's name (actor paths are <c>akka://courier/user/...</c>).</summary>
    public const string SystemName = "courier";

    private static readonly Lazy<Config> Reference = new(LoadReference);

    /// <summary>The embedded reference configuration alone.</summary>
    public static Config ReferenceConfig => Reference.Value;

    /// <summary>
    /// The configuration for a node with <paramref name="options"/>; with <paramref name="member"/> (a
    /// node with a <c>cluster { }</c>) an Akka.Cluster member on an ephemeral Akka.Remote port of the
    /// cluster host, with roles that name its server and its route URL.
    /// </summary>
    public static Config Build(ServerOptions options, ClusterMember? member = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        var overrides = new List<string>
        {
            $"akka.loglevel = {(options.Trace || options.Debug ? "DEBUG" : "INFO")}",
        };
        if (options.JetStream)
        {
            // Durable consumers' journal and snapshots live beside the streams, on the same sync policy.
            var account = options.JetStreamAccountDirectory;
            overrides.Add($"courier.persistence.journal.dir = {Quote(Path.Combine(account, "journal"))}");
            overrides.Add($"courier.persistence.snapshot-store.dir = {Quote(Path.Combine(account, "snapshots"))}");
            overrides.Add($"courier.persistence.journal.sync = {Quote(options.JetStreamSync.IsAlways ? "always" : ((long)options.JetStreamSync.Period.TotalMilliseconds).ToString(CultureInfo.InvariantCulture) + "ms")}");
        }

        if (member is not null)
        {
            overrides.Add("akka.actor.provider = cluster");
            overrides.Add($"akka.remote.dot-netty.tcp.hostname = {Quote(member.BindHost)}");
            overrides.Add($"akka.remote.dot-netty.tcp.public-hostname = {Quote(member.PublicHost)}");
            overrides.Add($"akka.remote.dot-netty.tcp.port = {member.Port.ToString(CultureInfo.InvariantCulture)}");
            overrides.Add($"akka.remote.dot-netty.tcp.public-port = {member.PublicPort.ToString(CultureInfo.InvariantCulture)}");
            overrides.Add($"akka.cluster.roles = [{string.Join(", ", member.Roles.Select(Quote))}]");
        }

        return ConfigurationFactory.ParseString(string.Join('\n', overrides)).WithFallback(ReferenceConfig);
    }

    /// <summary>
    /// Does the start-up work of the actor system's configuration that depends on no option, so a host can
    /// run it beside its own start-up: the embedded reference configuration parsed (kept), Akka's
    /// app.config lookup (ActorSystem.Create asks System.Configuration for an "akka" section even when it
    /// is given a configuration; the answer is cached) and the first duration read (Akka's HOCON values
    /// parse durations with a compiled regex, built and compiled once per process). Safe to run
    /// concurrently with <see cref="Build"/> and <see cref="CreateSystem"/>; best effort.
    /// </summary>
    public static void Prepare()
    {
        try
        {
            _ = ReferenceConfig.GetTimeSpan("akka.logger-startup-timeout", null, allowInfinite: false);
            _ = ConfigurationFactory.Load();
        }
        catch (Exception e) when (e is ConfigurationException or System.Configuration.ConfigurationErrorsException or FormatException)
        {
            // ActorSystem.Create meets the same error and reports it.
        }
    }

    /// <summary>Creates the node's actor system: <paramref name="config"/>, with Akka's log events going to <paramref name="loggerFactory"/>.</summary>
    /// <param name="config">The configuration (<see cref="Build"/>).</param>
    /// <param name="loggerFactory">Where Akka's log events go.</param>
    /// <param name="encryption">Encryption at rest for the persistence plugins' files (<c>jetstream { key }</c>); null: plaintext.</param>
    public static ActorSystem CreateSystem(Config config, ILoggerFactory loggerFactory, StoreEncryption? encryption = null)
    {
        var setup = ActorSystemSetup.Create(BootstrapSetup.Create().WithConfig(config), new LoggerFactorySetup(loggerFactory), new StoreEncryptionSetup(encryption));
        return ActorSystem.Create(SystemName, setup);
    }

    /// <summary>HOCON's quoted string: backslashes and quotes escaped.</summary>
    internal static string Quote(string value) => "\"" + value.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("\"", "\\\"", StringComparison.Ordinal) + "\"";

    private static Config LoadReference()
    {
        using var stream = typeof(ActorSystemConfig).Assembly.GetManifestResourceStream("Courier.Actors.reference.conf")
            ?? throw new InvalidOperationException("Courier.Actors.reference.conf is not embedded");
        using var reader = new StreamReader(stream);
        return ConfigurationFactory.ParseString(reader.ReadToEnd());
    }
}

/// <summary>A clustered node's Akka.Remote addresses and roles (see <see cref="ActorSystemConfig.Build"/>).</summary>
/// <param name="BindHost">The address Akka.Remote listens on: the cluster host.</param>
/// <param name="PublicHost">The address peers reach it on (the cluster host, or a local address when that is 0.0.0.0).</param>
/// <param name="Roles">Member roles: the server id, name and route URL (Cluster.ClusterNode reads them).</param>
/// <param name="Port">The port Akka.Remote listens on; 0, an ephemeral one.</param>
/// <param name="PublicPort">The port peers reach it on; 0, the listen port.</param>
public sealed record ClusterMember(string BindHost, string PublicHost, IReadOnlyList<string> Roles, int Port = 0, int PublicPort = 0);

/// <summary>
/// Hands encryption at rest to the persistence plugins (Akka creates them from HOCON, and a key never goes
/// into HOCON text, which Akka may log).
/// </summary>
public sealed class StoreEncryptionSetup(StoreEncryption? encryption) : Setup
{
    /// <summary>The encryption; null: plaintext.</summary>
    public StoreEncryption? Encryption { get; } = encryption;

    /// <summary>The encryption an actor system was created with; null when none.</summary>
    public static StoreEncryption? Of(ActorSystem system) => system.Settings.Setup.Get<StoreEncryptionSetup>().Value?.Encryption;
}

/// <summary>Hands the server's <see cref="ILoggerFactory"/> to <see cref="AkkaLogBridge"/> (Akka creates loggers by type).</summary>
public sealed class LoggerFactorySetup : Setup
{
    public LoggerFactorySetup(ILoggerFactory loggerFactory)
    {
        ArgumentNullException.ThrowIfNull(loggerFactory);
        LoggerFactory = loggerFactory;
    }

    public ILoggerFactory LoggerFactory { get; }
}
