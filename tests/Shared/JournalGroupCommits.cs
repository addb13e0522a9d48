using System.Reflection;
using Akka.Actor;
using Courier.Actors.Persistence;

namespace Courier.Testing;

/// <summary>
/// The group commits of Courier's journal plugin (tests, the journal benchmarks), read from the plugin
/// actor's instance: Akka.Persistence makes the plugin, so its actor ref is all a caller is given.
/// </summary>
internal static class JournalGroupCommits
{
    // ActorCell.Actor (the cell's current actor instance) is internal to Akka; Akka.TestKit's UnderlyingActor reads it too.
    private static readonly PropertyInfo CellActor =
        typeof(ActorCell).GetProperty("Actor", BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic)
        ?? throw new MissingMemberException(nameof(ActorCell), "Actor");

    /// <summary>Engine calls (one write, one fsync each) the journal plugin behind <paramref name="journal"/> has made so far.</summary>
    public static long GroupCommits(this IActorRef journal) =>
        journal is ActorRefWithCell { Underlying: ActorCell cell } && CellActor.GetValue(cell) is JournalPlugin plugin
            ? plugin.Batches
            : throw new InvalidOperationException($"{journal.Path} is not a running local Courier journal plugin");
}
