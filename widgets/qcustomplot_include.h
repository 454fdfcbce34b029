// SPDX-License-Identifier: MIT
// QCustomPlot 2.1's header still uses foreach (lines 4035, 4081): include it through here.
#pragma once

#undef QT_NO_FOREACH
#include <qcustomplot.h>
