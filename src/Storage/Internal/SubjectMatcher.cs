namespace Courier.Storage.Internal;

/// <summary>
/// Matches slots' subject ids against a filter, remembering each id's answer (a subject is matched
/// once per scan, not once per message). For scans over many messages; a single lookup should use
/// <see cref="SubjectFilter.Matches"/> directly.
/// </summary>
internal struct SubjectMatcher(SubjectFilter filter, SubjectTable subjects)
{
    private sbyte[]? _memo; // per id: 0 unknown, 1 match, -1 no match

    public bool Matches(int subjectId)
    {
        if (filter.IsAll)
        {
            return true;
        }

        _memo ??= new sbyte[subjects.IdLimit];
        if ((uint)subjectId < (uint)_memo.Length && _memo[subjectId] != 0)
        {
            return _memo[subjectId] > 0;
        }

        var entry = subjects[subjectId];
        var match = entry is not null && filter.Matches(entry.Key);
        if ((uint)subjectId < (uint)_memo.Length)
        {
            _memo[subjectId] = match ? (sbyte)1 : (sbyte)-1;
        }

        return match;
    }
}
