using System.Text;
using Akka.Actor;
using Akka.Configuration;
using Akka.Serialization;
using Courier.Actors.Hosting;

namespace Courier.Actors.Tests.Persistence;

/// <summary>
/// A TestKit whose actor system uses Courier's journal and snapshot-store plugins (reference.conf), on a
/// temporary directory or in memory, with a binary test serializer bound to strings and
/// <see cref="TestPayload"/>: the plugins refuse to persist anything through Akka's JSON fallback.
/// </summary>
public abstract class PluginSpec : Akka.TestKit.Xunit2.TestKit
{
    protected PluginSpec(bool onDisk, string? extraConfig = null)
        : this(onDisk ? Directory.CreateTempSubdirectory("courier-plugin-").FullName : null, extraConfig)
    {
    }

    private PluginSpec(string? directory, string? extraConfig)
        : base(Configure(directory, extraConfig))
    {
        StoreDirectory = directory;
    }

    /// <summary>The plugins' directory (journal/ and snapshots/ below it); null in memory.</summary>
    protected string? StoreDirectory { get; }

    protected IActorRef Journal => Akka.Persistence.Persistence.Instance.Apply(Sys).JournalFor(null);

    protected IActorRef SnapshotStore => Akka.Persistence.Persistence.Instance.Apply(Sys).SnapshotStoreFor(null);

    /// <summary>The configuration of an actor system over <paramref name="directory"/> (null: in memory).</summary>
    internal static Config Configure(string? directory, string? extraConfig = null)
    {
        var dirs = directory is null ? "" : $"""
            courier.persistence.journal.dir = {ActorSystemConfig.Quote(Path.Combine(directory, "journal"))}
            courier.persistence.snapshot-store.dir = {ActorSystemConfig.Quote(Path.Combine(directory, "snapshots"))}
            """;
        return ConfigurationFactory.ParseString($$"""
            {{dirs}}
            {{extraConfig}}
            akka.loggers = ["Akka.TestKit.TestEventListener, Akka.TestKit"]
            akka.actor.serializers.courier-test = "Courier.Actors.Tests.Persistence.TestPayloadSerializer, Courier.Actors.Tests"
            akka.actor.serialization-bindings {
              "System.String" = courier-test
              "Courier.Actors.Tests.Persistence.TestPayload, Courier.Actors.Tests" = courier-test
            }
            """).WithFallback(ActorSystemConfig.ReferenceConfig);
    }

    protected override void AfterAll()
    {
        base.AfterAll();
        // xunit's TestKit runs AfterAll before it shuts the system down: stop the actors first, or a
        // store they close in PostStop (its index files) writes into the directory while it is deleted.
        Shutdown();
        if (StoreDirectory is not null && Directory.Exists(StoreDirectory))
        {
            Directory.Delete(StoreDirectory, recursive: true);
        }
    }
}

/// <summary>An event type of the tests.</summary>
public sealed record TestPayload(string Text);

/// <summary>A binary serializer for the tests' strings and <see cref="TestPayload"/> (UTF-8, the manifest tells which).</summary>
public sealed class TestPayloadSerializer(ExtendedActorSystem system) : SerializerWithStringManifest(system)
{
    public override int Identifier => 4_222_900;

    public override string Manifest(object o) => o is TestPayload ? "tck.TestPayload" : "s";

    public override byte[] ToBinary(object obj) => Encoding.UTF8.GetBytes(obj is TestPayload p ? p.Text : (string)obj);

    public override object FromBinary(byte[] bytes, string manifest) =>
        manifest == "tck.TestPayload" ? new TestPayload(Encoding.UTF8.GetString(bytes)) : Encoding.UTF8.GetString(bytes);
}
