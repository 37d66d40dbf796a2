#pragma once
// Fixture for LayersTest.CheckFindsAnUpwardInclude (tests/tools/check_layers.py):
// analysis/ may not include pipeline/.
#include "formats/common/event.h"
#include "pipeline/inputs/input_record.h"
